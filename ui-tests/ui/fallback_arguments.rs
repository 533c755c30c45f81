use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080", fallback = "Cached")]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn status(&self, #[path] id: u64) -> Result<String, Error>;
}

#[feign_client("stock-service", fallback = Cached, fallback_factory = Cached)]
pub trait StockService {
    #[get("/stock/{sku}")]
    async fn stock(&self, #[path] sku: &str) -> Result<u32, Error>;
}

#[feign_client("price-service", fallback = Cached)]
pub trait PriceService {
    #[get("/prices/{sku}")]
    async fn price(&self, #[path] sku: &(impl std::fmt::Display + Sync)) -> Result<u32, Error>;
}

#[derive(Default)]
pub struct Cached;

fn main() {}
