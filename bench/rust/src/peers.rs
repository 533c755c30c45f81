//! What a Rust user would pick instead of feign-rs, making the same call as
//! [`OrderService::get_order`](crate::client::OrderService::get_order).

use std::time::Duration;

use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};
use reqwest_retry::policies::ExponentialBackoff;
use reqwest_retry::{Jitter, RetryTransientMiddleware};
use reqwest_tracing::TracingMiddleware;

use crate::client::{Order, RawError, SERVICE};

/// reqwest behind the most common middleware stack: reqwest-retry and reqwest-tracing, set up
/// as close to feign's defaults as they allow. Transient failures are retried up to 4 times
/// (5 attempts) with full jitter below a backoff from 100 ms to 1 s (reqwest-retry's base is an
/// integer, so it grows ×2 where feign's grows ×1.5); every request gets a tracing span.
#[derive(Debug, Clone)]
pub struct MiddlewareClient {
    http: ClientWithMiddleware,
    base: String,
}

impl MiddlewareClient {
    /// A client for `base` (`http://127.0.0.1:PORT`) with reqwest's default pool.
    pub fn new(base: impl Into<String>) -> reqwest::Result<MiddlewareClient> {
        let reqwest = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let retry = ExponentialBackoff::builder()
            .retry_bounds(Duration::from_millis(100), Duration::from_secs(1))
            .jitter(Jitter::Full)
            .build_with_max_retries(4);
        let http = ClientBuilder::new(reqwest)
            .with(TracingMiddleware::default())
            .with(RetryTransientMiddleware::new_with_policy(retry))
            .build();
        Ok(MiddlewareClient {
            http,
            base: base.into(),
        })
    }

    /// `GET {base}/orders/{id}`, decoded.
    pub async fn get_order(&self, id: u64) -> Result<Order, RawError> {
        get_order_at(&self.http, &format!("{}/orders/{id}", self.base)).await
    }
}

/// `GET url` through a middleware stack, its order decoded as [`RawClient`](crate::client::RawClient) does.
async fn get_order_at(http: &ClientWithMiddleware, url: &str) -> Result<Order, RawError> {
    let response = http
        .get(url)
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|err| match err {
            reqwest_middleware::Error::Reqwest(err) => RawError::Http(err),
            other => RawError::Middleware(other),
        })?;
    let body = response.error_for_status()?.bytes().await?;
    Ok(serde_json::from_slice(&body)?)
}

/// A plain reqwest client whose requests name the service (`http://order-service/...`) and go
/// through feign-lb's [`LoadBalancedMiddleware`](feign_lb::LoadBalancedMiddleware): the balancer
/// for any HTTP call, with its default retry policy and nothing else in the stack.
#[derive(Debug, Clone)]
pub struct BalancedReqwest {
    http: ClientWithMiddleware,
}

impl BalancedReqwest {
    /// A client balancing over `lb`'s instances of the order service.
    pub fn new(lb: feign_lb::LoadBalancer) -> reqwest::Result<BalancedReqwest> {
        let reqwest = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let http = ClientBuilder::new(reqwest)
            .with(feign_lb::LoadBalancedMiddleware::new(lb))
            .build();
        Ok(BalancedReqwest { http })
    }

    /// `GET http://order-service/orders/{id}`, decoded.
    pub async fn get_order(&self, id: u64) -> Result<Order, RawError> {
        get_order_at(&self.http, &format!("http://{SERVICE}/orders/{id}")).await
    }
}

/// The feignhttp crate's declarative client for the order service.
#[cfg(feature = "feignhttp")]
// feignhttp's macro generates undocumented public items.
#[allow(missing_docs)]
pub mod feignhttp_client {
    use feignhttp::{feign, Context, FeignClientBuilder};

    use crate::client::Order;

    /// Where the feignhttp client sends its calls: the port fills the URL's `{port}`.
    #[derive(Context)]
    pub struct OrderContext {
        /// The server's port on 127.0.0.1.
        #[url_path]
        port: u16,
    }

    /// The order service as feignhttp declares it.
    #[feign(url = "http://127.0.0.1:{port}", headers = "Accept: application/json")]
    pub trait FeignhttpOrders {
        /// One order by id.
        #[get("/orders/{id}")]
        async fn get_order(&self, #[path] id: u64) -> feignhttp::Result<Order>;
    }

    /// A feignhttp client of the server on `port`.
    pub fn feignhttp_orders(port: u16) -> feignhttp::Result<FeignhttpOrders> {
        FeignhttpOrders::builder()
            .context(OrderContext { port })
            .build()
    }
}
