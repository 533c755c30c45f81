use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders")]
    async fn find(&self, #[body] filter: String) -> Result<String, Error>;

    #[head("/orders")]
    async fn exists(&self, #[form] filter: Vec<(String, String)>) -> Result<(), Error>;
}

fn main() {}
