//! A checkout that reorders a past order through an `OrderService` client, and the run of
//! `cargo run -p test-double`: the checkout tested against `OrderServiceDouble`, the test double
//! `#[feign_client]` generates when feign-core's `test-double` feature is on.

use std::fmt;
use std::sync::Arc;

use feign_core::http::StatusCode;
use feign_core::{feign_client, Error};
use serde::{Deserialize, Serialize};

/// An order as the order service returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    /// The order's number.
    pub id: u64,
    /// What was ordered.
    pub items: Vec<String>,
}

/// A new order, as the order service takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewOrder {
    /// What to order.
    pub items: Vec<String>,
}

/// The order service's client.
#[feign_client("order-service", url = "http://127.0.0.1:8080", path = "/api")]
pub trait OrderService {
    /// The order `id`; `None` when the service answers 404.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Option<Order>, Error>;

    /// Places an order; the service answers with it, numbered.
    #[post("/orders")]
    async fn place_order(&self, #[body] order: &NewOrder) -> Result<Order, Error>;
}

/// Why a reorder failed.
#[derive(Debug)]
pub enum CheckoutError {
    /// No order has that number.
    UnknownOrder(u64),
    /// The order service failed.
    Service(Error),
}

impl fmt::Display for CheckoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckoutError::UnknownOrder(id) => write!(f, "no order {id}"),
            CheckoutError::Service(error) => write!(f, "order service failed: {error}"),
        }
    }
}

impl std::error::Error for CheckoutError {}

/// The code under test: it knows only `dyn OrderService`.
pub struct Checkout {
    orders: Arc<dyn OrderService>,
}

impl Checkout {
    /// A checkout over any implementation of the client's trait.
    pub fn new(orders: Arc<dyn OrderService>) -> Self {
        Checkout { orders }
    }

    /// Places the order `id` again. A place refused with 503 is tried once more.
    pub async fn reorder(&self, id: u64) -> Result<Order, CheckoutError> {
        let past = self
            .orders
            .get_order(id)
            .await
            .map_err(CheckoutError::Service)?
            .ok_or(CheckoutError::UnknownOrder(id))?;
        let again = NewOrder { items: past.items };
        match self.orders.place_order(&again).await {
            Err(error) if error.status() == Some(StatusCode::SERVICE_UNAVAILABLE) => self
                .orders
                .place_order(&again)
                .await
                .map_err(CheckoutError::Service),
            placed => placed.map_err(CheckoutError::Service),
        }
    }
}

/// What the run saw.
#[derive(Debug)]
pub struct Report {
    /// The order placed by the reorder of order 7.
    pub reordered: Order,
    /// The error of the reorder of an order the service does not know.
    pub unknown: String,
    /// `place_order` calls, the retried one included.
    pub place_calls: usize,
    /// The arguments of every `place_order` call, as text.
    pub placed: Vec<String>,
    /// The error of a call no rule answers.
    pub unanswered: String,
}

/// Runs the checkout against the double, as a test would, and reports what it saw.
pub async fn run() -> Result<Report, String> {
    let orders = OrderServiceDouble::new();
    let book = Order {
        id: 7,
        items: vec!["book".to_owned()],
    };
    orders
        .on_get_order()
        .when(|id| *id == 7)
        .returns(Some(book));
    orders.on_get_order().when(|id| *id == 8).returns(None);
    // The first place is refused once; the retry is answered from the order it sends.
    orders
        .on_place_order()
        .times(1)
        .fails_with_status(StatusCode::SERVICE_UNAVAILABLE);
    orders.on_place_order().answers(|order| {
        Ok(Order {
            id: 100,
            items: order.items.clone(),
        })
    });

    let checkout = Checkout::new(Arc::new(orders.clone()));
    let reordered = checkout
        .reorder(7)
        .await
        .map_err(|error| format!("reorder 7: {error}"))?;
    let unknown = match checkout.reorder(8).await {
        Err(error @ CheckoutError::UnknownOrder(_)) => error.to_string(),
        other => return Err(format!("reorder 8 should find no order: {other:?}")),
    };
    let unanswered = match checkout.reorder(9).await {
        Err(CheckoutError::Service(error)) => error.to_string(),
        other => return Err(format!("reorder 9 has no rule: {other:?}")),
    };
    orders
        .verify()
        .map_err(|unmet| format!("unmet rules: {unmet:?}"))?;
    Ok(Report {
        reordered,
        unknown,
        place_calls: orders.on_place_order().calls(),
        placed: orders.on_place_order().argument_texts(),
        unanswered,
    })
}
