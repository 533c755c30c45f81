use feign_core::{feign_client, Error};

#[derive(Default)]
pub struct NotAFallback;

#[feign_client("order-service", url = "http://127.0.0.1:8080", fallback = NotAFallback)]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn status(&self, #[path] id: u64) -> Result<String, Error>;
}

#[derive(Default)]
pub struct NotAFactory;

#[feign_client("stock-service", url = "http://127.0.0.1:8080", fallback_factory = NotAFactory)]
pub trait StockService {
    #[get("/stock/{sku}")]
    async fn stock(&self, #[path] sku: &str) -> Result<u32, Error>;
}

pub struct NoDefault;

#[feign_core::async_trait]
impl PriceService for NoDefault {
    async fn price(&self, _sku: &str) -> Result<u32, Error> {
        Ok(0)
    }
}

#[feign_client("price-service", url = "http://127.0.0.1:8080", fallback = NoDefault)]
pub trait PriceService {
    #[get("/prices/{sku}")]
    async fn price(&self, #[path] sku: &str) -> Result<u32, Error>;
}

fn main() {}
