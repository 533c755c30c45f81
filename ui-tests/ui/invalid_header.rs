use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
#[headers("Accept application/json")]
pub trait OrderService {
    #[get("/orders")]
    #[headers("X-Bad Name: value", "X-Split: a\r\nX-Injected: b")]
    async fn list(&self, #[header("X-Request Id")] rid: &str) -> Result<String, Error>;
}

fn main() {}
