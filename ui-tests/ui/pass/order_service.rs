//! Every attribute the macro accepts, on the README's trait and a few more methods.
use std::collections::HashMap;
use std::sync::Arc;

use feign_core::{feign_client, Bytes, Error, Response};
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize)]
pub struct Order {
    pub id: u64,
}

#[derive(Serialize)]
pub struct NewOrder {
    pub item: String,
}

#[derive(Serialize)]
pub struct Filter {
    pub status: Option<String>,
}

/// The errors of the orders API.
#[derive(Debug)]
pub struct OrderError(pub Error);

impl From<Error> for OrderError {
    fn from(error: Error) -> Self {
        OrderError(error)
    }
}

/// Orders, over HTTP.
#[feign_client("order-service", url = "http://127.0.0.1:8080", path = "/api")]
#[headers("Accept: application/json")]
pub trait OrderService {
    /// One order.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;

    #[get("/orders")]
    async fn find(&self, #[query] status: Option<String>, #[query("page-size")] size: u32) -> Result<Vec<Order>, Error>;

    #[get("/orders/{id}")]
    async fn try_get(&self, #[path] id: u64) -> Result<Option<Order>, Error>;

    #[post("/orders")]
    #[headers("X-Source: feign")]
    async fn create(&self, #[body] order: &NewOrder, #[header("X-Request-Id")] rid: &str) -> Result<Order, Error>;

    #[delete("/orders/{id}")]
    async fn cancel(&self, #[path] id: u64) -> Result<(), Error>;

    #[get("/orders/search?view=full")]
    #[options(connect_timeout_ms = 100, read_timeout_ms = 2000, total_timeout_ms = 5000, follow_redirects = true)]
    async fn search(
        &self,
        #[query_map] filter: &Filter,
        #[query] tags: &[String],
        #[query] ids: Vec<u64>,
        #[query("maybe")] maybe: Option<Vec<u32>>,
        #[header_map] extra: &HashMap<String, String>,
        #[header("X-Trace")] trace: Option<&str>,
    ) -> Result<String, OrderError>;

    #[put("/orders/{id}/note")]
    async fn note(&self, #[path] id: u64, #[body] text: &str) -> Result<Bytes, Error>;

    #[patch("/orders/{type}/raw")]
    #[idempotent]
    async fn raw(&self, #[path] r#type: &str, #[body] data: Vec<u8>) -> Result<Response, Error>;

    #[post("/orders/form")]
    async fn form(&self, #[form] fields: &[(&str, &str)]) -> Result<Option<String>, Error>;

    #[head("/orders/{id}")]
    async fn exists(&self, #[path("id")] order_id: u64) -> Result<Option<()>, Error>;

    /// A default method is kept and callable on the client.
    async fn get_twice(&self, id: u64) -> Result<(Order, Order), Error> {
        Ok((self.get_order(id).await?, self.get_order(id).await?))
    }
}

fn assert_send<T: Send>(_: T) {}

fn main() {
    let client: Result<OrderServiceClient, Error> = OrderServiceClient::builder().build();
    if let Ok(client) = client {
        let shared: Arc<dyn OrderService> = Arc::new(client.clone());
        assert_send(shared.get_order(1));
        assert_send(client.find(None, 10));
        let _ = format!("{client:?}");
    }
}
