use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(#[path] id: u64) -> Result<String, Error>;

    #[get("/orders")]
    async fn list(&mut self) -> Result<String, Error>;
}

fn main() {}
