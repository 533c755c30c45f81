use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders/{id}")]
    fn get_order(&self, #[path] id: u64) -> Result<String, Error>;
}

fn main() {}
