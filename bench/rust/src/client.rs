//! The clients under test: a feign client declared once, and raw reqwest doing the same call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use feign_core::feign_client;
use serde::Deserialize;

/// The order the server answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Order {
    /// The id asked for, echoed.
    pub id: u64,
    /// What was ordered.
    pub item: String,
    /// How many.
    pub quantity: u32,
}

/// The order service, resolved through a URL or a load balancer.
#[feign_client("order-service")]
#[headers("Accept: application/json")]
pub trait OrderService {
    /// One order by id.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, feign_core::Error>;
}

/// The service name the balancer and the registry know the servers by.
pub const SERVICE: &str = "order-service";

/// Raw reqwest doing what [`OrderService::get_order`] does: same header, status check and
/// JSON decoding, no framework.
#[derive(Debug, Clone)]
pub struct RawClient {
    http: reqwest::Client,
    bases: Arc<[String]>,
    next: Arc<AtomicUsize>,
}

impl RawClient {
    /// A client for `base` (`http://127.0.0.1:PORT`) with reqwest's default pool.
    pub fn new(base: impl Into<String>) -> reqwest::Result<RawClient> {
        RawClient::rotating(vec![base.into()])
    }

    /// A client that calls `bases` in turn through one pool, as a round-robin balancer over
    /// them would, but with no framework.
    pub fn rotating(bases: Vec<String>) -> reqwest::Result<RawClient> {
        Ok(RawClient {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()?,
            bases: bases.into(),
            next: Arc::default(),
        })
    }

    /// `GET {base}/orders/{id}`, decoded.
    pub async fn get_order(&self, id: u64) -> Result<Order, RawError> {
        let base = match &*self.bases {
            [only] => only,
            bases => &bases[self.next.fetch_add(1, Ordering::Relaxed) % bases.len()],
        };
        let body = self
            .http
            .get(format!("{base}/orders/{id}"))
            .header("accept", "application/json")
            .send()
            .await?
            .error_for_status()?
            .bytes()
            .await?;
        Ok(serde_json::from_slice(&body)?)
    }
}

/// Why a raw call failed.
#[derive(Debug)]
pub enum RawError {
    /// The request or the response failed.
    Http(reqwest::Error),
    /// The body was not an order.
    Json(serde_json::Error),
    /// A middleware failed the call (reqwest-middleware stacks only).
    Middleware(reqwest_middleware::Error),
}

impl From<reqwest::Error> for RawError {
    fn from(err: reqwest::Error) -> Self {
        RawError::Http(err)
    }
}

impl From<serde_json::Error> for RawError {
    fn from(err: serde_json::Error) -> Self {
        RawError::Json(err)
    }
}
