// Test doubles of every parameter and return shape, used as `dyn Trait` by code that does not
// know them, under the workspace's lints.
#![deny(warnings, missing_docs, unreachable_pub)]
//! A crate with a client and its double.

use std::borrow::Cow;
use std::sync::Arc;

use feign_core::{feign_client, Error, Response, ResponseEntity, StreamingResponse};

/// An order.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Order {
    /// Its number.
    pub id: u64,
}

/// The order service.
#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    /// One order.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Option<Order>, Error>;
    /// Orders by owner and tags.
    #[get("/orders")]
    async fn search(
        &self,
        #[query] owner: &'static str,
        #[query] tags: &[String],
        #[header("X-Note")] note: Cow<'_, str>,
        #[query] page: Option<u32>,
    ) -> Result<Vec<Order>, Error>;
    /// Nothing back.
    #[delete("/orders/{id}")]
    async fn cancel(&self, #[path] id: u64) -> Result<(), Error>;
    /// The export.
    #[get("/export")]
    async fn export(&self) -> Result<StreamingResponse, Error>;
    /// Raw.
    #[get("/raw")]
    async fn raw(&self) -> Result<Response, Error>;
    /// An entity.
    #[get("/entity")]
    async fn entity(&self) -> Result<Option<ResponseEntity<String>>, Error>;
    /// A body.
    #[post("/orders")]
    async fn create(&self, #[body] body: Vec<u8>) -> Result<Order, Error>;
}

mod private {
    use feign_core::{feign_client, Error};

    #[feign_client("inner", url = "http://127.0.0.1:8080")]
    trait Inner {
        #[get("/x")]
        async fn x(&self, #[query] r#type: &str) -> Result<String, Error>;
    }
}

async fn code_under_test(orders: Arc<dyn OrderService>) -> Option<u64> {
    orders.get_order(1).await.ok().flatten().map(|order| order.id)
}

fn main() {
    let orders = OrderServiceDouble::default();
    orders.on_get_order().when(|id| *id == 1).returns(Some(Order { id: 1 }));
    orders
        .on_search()
        .when(|(owner, tags, note, page)| owner.is_empty() && tags.is_empty() && note.is_empty() && page.is_none())
        .answers(|(_, tags, _, _)| Ok(tags.iter().map(|_| Order { id: 0 }).collect()));
    orders.on_cancel().returns(());
    orders.on_create().answers(|body| Ok(Order { id: body.len() as u64 }));
    let kept: Vec<Vec<u8>> = orders.on_create().arguments();
    let texts: Vec<String> = orders.on_search().argument_texts();
    drop((kept, texts, orders.verify(), format!("{orders:?}")));
    let _ = code_under_test(Arc::new(orders.clone()));
    let _ = OrderServiceDouble::strict();
}
