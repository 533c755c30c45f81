use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders")]
    async fn find(&self, #[quey] status: String, #[heder("X-Tenant")] tenant: String) -> Result<String, Error>;

    #[gte("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<String, Error>;

    /// rustc's own attributes are left alone.
    #[post("/orders")]
    #[idempotnet]
    #[header("Content-Type: application/json")]
    #[allow(clippy::all)]
    #[must_use]
    async fn create(&self, #[body] order: String) -> Result<String, Error>;

    #[get("/orders/count")]
    async fn count(&self, #[frobnicate] status: String) -> Result<u64, Error>;
}

fn main() {}
