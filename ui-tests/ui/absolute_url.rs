use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("http://other.example/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<String, Error>;

    #[get("//other.example/orders")]
    async fn list(&self) -> Result<String, Error>;
}

fn main() {}
