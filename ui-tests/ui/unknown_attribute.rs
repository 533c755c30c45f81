use feign_core::{feign_client, Error};

#[feign_client("order-service", uri = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders")]
    async fn find(&self, #[quer] status: String) -> Result<String, Error>;

    #[get("/orders")]
    #[options(read_timeout = 100)]
    async fn list(&self, #[query] page: u32) -> Result<String, Error>;
}

fn main() {}
