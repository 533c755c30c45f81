//! The balancer as a `reqwest_middleware::Middleware` (feature `reqwest-middleware`).

use http::Extensions;
use reqwest::{Request, Response};
use reqwest_middleware::{Middleware, Next, Result};

use super::call::{service_name, Call, Ended, Next as After};
use crate::LoadBalancer;

/// A plain `reqwest::Client` calling services by name:
/// `ClientBuilder::new(client).with(LoadBalancedMiddleware::new(lb))` sends
/// `http://order-service/orders/1` to an instance of `order-service` (see the
/// [module](crate::http) for which hosts are service names and when a request is retried).
///
/// A request is retried only when `reqwest::Request::try_clone` can copy it (a streamed body
/// cannot be). When no instance can be chosen, or an instance URL is unusable, the error is a
/// `reqwest_middleware::Error::Middleware` holding the [`feign_core::Error`].
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use feign_lb::{LoadBalancedMiddleware, LoadBalancer, StaticSupplier};
///
/// let lb = LoadBalancer::builder()
///     .supplier(StaticSupplier::new("order-service", ["http://127.0.0.1:8081"]))
///     .build();
/// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
///     .with(LoadBalancedMiddleware::new(lb))
///     .build();
/// let order = client.get("http://order-service/orders/1").send().await?.text().await?;
/// # let _ = order;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct LoadBalancedMiddleware {
    lb: LoadBalancer,
}

impl LoadBalancedMiddleware {
    /// A middleware that balances over `lb`'s services.
    pub fn new(lb: LoadBalancer) -> Self {
        LoadBalancedMiddleware { lb }
    }
}

#[async_trait::async_trait]
impl Middleware for LoadBalancedMiddleware {
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        let url = request.url();
        let Some(service) = service_name(url.host_str(), url.port()) else {
            return next.run(request, extensions).await;
        };
        let mut call = Call::start(&self.lb, service, request.method(), request.headers());
        let path = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        let mut request = Some(request);
        loop {
            let Some(original) = request.take() else {
                unreachable!("the loop only goes on with a request kept for the retry");
            };
            let attempt = call
                .choose(original.headers())
                .map_err(reqwest_middleware::Error::middleware)?;
            // Keep the original for a retry when it can be copied; else send it and keep none.
            let (mut sent, kept) = match original.try_clone() {
                Some(copy) => (copy, Some(original)),
                None => (original, None),
            };
            *sent.url_mut() = reqwest::Url::parse(&attempt.url(&path)).map_err(|_| {
                reqwest_middleware::Error::middleware(feign_core::Error::request(
                    "the instance's URL is not a valid URL",
                ))
            })?;
            attempt.authorize(sent.headers_mut());
            let result = next.clone().run(sent, extensions).await;
            let ended = match &result {
                Ok(response) => Ended::Response(response.status(), response.headers()),
                Err(error) if error.is_connect() => Ended::Connect,
                Err(error) if error.is_timeout() => Ended::Timeout,
                Err(_) => Ended::Transport,
            };
            let delay = match call.ended(attempt, ended, kept.is_some()) {
                After::Retry(delay) => delay,
                After::Done => return result,
            };
            drop(result);
            request = kept;
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
        }
    }
}
