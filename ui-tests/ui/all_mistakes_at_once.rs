// Several unrelated mistakes are all reported by one compile, and code using the trait and the
// client type does not add errors of its own.
use std::sync::Arc;

use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] order_id: u64) -> Result<String, Error>;

    #[get("/orders")]
    async fn find(&self, #[body] filter: String) -> Result<String, Error>;

    #[put("/orders/{id}")]
    fn replace(&self, #[path] id: u64) -> Result<(), Error>;
}

fn use_it(_: Option<Arc<dyn OrderService>>, _: Option<OrderServiceClient>) {}

fn main() {
    use_it(None, None);
}
