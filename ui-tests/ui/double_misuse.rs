// The test double's rules are typed by the method: a value that is not `Clone` cannot be
// returned by clone, and a condition takes the method's argument by reference.
use feign_core::{feign_client, Error};

#[derive(serde::Deserialize)]
pub struct Order {
    pub id: u64,
}

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;
}

fn main() {
    let orders = OrderServiceDouble::new();
    orders.on_get_order().returns(Order { id: 1 });
    orders.on_get_order().when(|id: u64| id == 7).answers(|id| Ok(Order { id }));
}
