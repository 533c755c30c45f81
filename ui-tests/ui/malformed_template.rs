use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "127.0.0.1:8080", path = "api")]
pub trait OrderService {
    #[get("/orders/{id")]
    async fn unclosed(&self, #[path] id: u64) -> Result<String, Error>;

    #[get("/orders?status={status}")]
    async fn query_var(&self, #[query] status: &str) -> Result<String, Error>;

    #[get("orders")]
    async fn relative(&self) -> Result<String, Error>;

    #[get(42)]
    async fn not_a_string(&self) -> Result<String, Error>;
}

fn main() {}
