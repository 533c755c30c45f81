use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Option<String>;

    #[delete("/orders/{id}")]
    async fn cancel(&self, #[path] id: u64);

    #[get("/orders")]
    async fn list(&self) -> Result<String, Error>;
}

fn main() {}
