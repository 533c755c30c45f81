use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080", url = "http://127.0.0.1:9090")]
pub trait OrderService {
    #[get("/orders/{id}")]
    #[post("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<String, Error>;

    #[post("/orders")]
    #[idempotent]
    #[idempotent]
    async fn create(&self, #[body] #[form] order: String) -> Result<String, Error>;

    #[get("/orders")]
    #[options(read_timeout_ms = 100, read_timeout_ms = 200)]
    async fn list(&self) -> Result<String, Error>;
}

fn main() {}
