use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService<T> {
    type Order;

    #[get("/orders/{id}")]
    async fn get_order<U: std::fmt::Display>(&self, #[path] id: U) -> Result<String, Error>;

    async fn helper(&self, #[query] page: u32) -> Result<String, Error> {
        Ok(page.to_string())
    }
}

fn main() {}
