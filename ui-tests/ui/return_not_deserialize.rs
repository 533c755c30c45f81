use feign_core::{feign_client, Error, ResponseEntity};

pub struct Order {
    pub id: u64,
}

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;

    #[get("/orders/{id}")]
    async fn find_order(&self, #[path] id: u64) -> Result<Option<Order>, Error>;

    #[get("/orders/{id}")]
    async fn order_entity(&self, #[path] id: u64) -> Result<ResponseEntity<Order>, Error>;
}

fn main() {}
