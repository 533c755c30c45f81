use feign_core::{feign_client, Error};

/// Error types without `From<feign_core::Error>`, as `String` has none.
pub struct LookupFailed;
pub struct Rejected;

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<String, LookupFailed>;

    #[get("/orders")]
    async fn list(&self) -> Result<String, Error>;
}

// Not object safe (an `impl Trait` parameter), so its methods have no fallback.
#[feign_client("audit", url = "http://127.0.0.1:8080")]
pub trait Audit {
    #[post("/events")]
    async fn record(&self, #[body] event: impl serde::Serialize + Send + Sync) -> Result<(), Rejected>;
}

fn main() {}
