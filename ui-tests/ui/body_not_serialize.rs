use feign_core::{feign_client, Error};

pub struct NewOrder {
    pub item: String,
}

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[post("/orders")]
    async fn create(&self, #[body] order: &NewOrder) -> Result<(), Error>;
}

fn main() {}
