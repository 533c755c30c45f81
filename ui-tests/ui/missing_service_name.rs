use feign_core::{feign_client, Error};

#[feign_client(url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders")]
    async fn list(&self) -> Result<String, Error>;
}

fn main() {}
