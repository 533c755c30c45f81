use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
#[headers("Host: evil.example")]
pub trait OrderService {
    #[post("/orders")]
    #[headers("Transfer-Encoding: chunked")]
    async fn create(&self, #[body] order: String, #[header("Content-Length")] length: u64) -> Result<String, Error>;

    #[get("/orders")]
    async fn list(&self, #[header("connection")] connection: &str) -> Result<String, Error>;
}

fn main() {}
