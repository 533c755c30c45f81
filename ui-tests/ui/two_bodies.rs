use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[post("/orders")]
    async fn create(&self, #[body] order: String, #[body] again: String) -> Result<(), Error>;

    #[post("/orders/form")]
    async fn create_form(&self, #[body] order: String, #[form] fields: Vec<(String, String)>) -> Result<(), Error>;
}

fn main() {}
