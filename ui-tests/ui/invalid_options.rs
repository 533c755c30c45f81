use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders")]
    #[options(read_timeout_ms = 0, connect_timeout_ms = "100", follow_redirects = 1)]
    async fn list(&self) -> Result<String, Error>;

    #[post("/orders")]
    #[idempotent(true)]
    async fn create(&self, #[body("json")] order: String) -> Result<String, Error>;
}

fn main() {}
