use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders")]
    async fn find(&self, status: String) -> Result<String, Error>;

    async fn no_http_method(&self) -> Result<String, Error>;
}

fn main() {}
