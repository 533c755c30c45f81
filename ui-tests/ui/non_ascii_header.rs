use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
#[headers("X-Greeting: café")]
pub trait OrderService {
    #[get("/orders")]
    #[headers("X-Ok: plain ascii", "X-Delete: a\x7fb")]
    async fn list(&self) -> Result<String, Error>;
}

fn main() {}
