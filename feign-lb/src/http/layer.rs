//! The balancer as a `tower` layer over any `Service<http::Request<B>>`.

use std::error::Error as StdError;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use feign_core::BoxError;
use tower::{Layer, Service, ServiceExt};

use super::call::{service_name, Call, Ended, Next};
use crate::LoadBalancer;

/// Wraps a service in [`LoadBalanced`]: requests to `http://<service>/...` go to an instance
/// the balancer picks, and are retried on another one as its retry policy says.
///
/// ```no_run
/// # async fn run() -> Result<(), feign_core::BoxError> {
/// use feign_lb::http::LoadBalancedLayer;
/// use feign_lb::{LoadBalancer, StaticSupplier};
/// use tower::{Layer, ServiceExt};
///
/// let lb = LoadBalancer::builder()
///     .supplier(StaticSupplier::new("order-service", ["http://127.0.0.1:8081"]))
///     .build();
/// # let transport = tower::service_fn(|_: http::Request<String>| async {
/// #     Ok::<_, std::io::Error>(http::Response::new(String::new()))
/// # });
/// // `transport`: any Service<http::Request<B>>, B: Clone (a hyper-util client...).
/// let client = LoadBalancedLayer::new(lb).layer(transport);
/// let request = http::Request::get("http://order-service/orders/1").body(String::new())?;
/// let response = client.oneshot(request).await?;
/// # let _ = response;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct LoadBalancedLayer {
    lb: LoadBalancer,
}

impl LoadBalancedLayer {
    /// A layer that balances over `lb`'s services.
    pub fn new(lb: LoadBalancer) -> Self {
        LoadBalancedLayer { lb }
    }
}

impl<S> Layer<S> for LoadBalancedLayer {
    type Service = LoadBalanced<S>;

    fn layer(&self, inner: S) -> LoadBalanced<S> {
        LoadBalanced {
            inner,
            lb: self.lb.clone(),
        }
    }
}

/// A service whose requests to `http://<service>/...` go to instances of that service (see the
/// [module](crate::http) for which hosts are service names and when a request is retried).
///
/// Errors are boxed: the inner service's own, and a [`feign_core::Error`] when no instance
/// can be chosen ([`feign_core::Error::is_no_instance`]) or an instance URL is unusable. The
/// inner service's error counts as a connect failure (retried for any method) when an
/// [`io::Error`] of kind `ConnectionRefused` stands in its source chain (as in hyper-util's),
/// as a timeout for kind `TimedOut`, and as a failure after sending otherwise.
#[derive(Clone, Debug)]
pub struct LoadBalanced<S> {
    inner: S,
    lb: LoadBalancer,
}

impl<S> LoadBalanced<S> {
    /// `inner` behind `lb`.
    pub fn new(inner: S, lb: LoadBalancer) -> Self {
        LoadBalanced { inner, lb }
    }
}

impl<S, B, R> Service<http::Request<B>> for LoadBalanced<S>
where
    S: Service<http::Request<B>, Response = http::Response<R>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: Clone + Send + 'static,
    R: Send + 'static,
{
    type Response = http::Response<R>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<R>, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        // The ready service serves this call; the next call gets a fresh clone.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let Some(service) = service_name(request.uri().host(), request.uri().port_u16()) else {
            return Box::pin(async move { inner.oneshot(request).await.map_err(Into::into) });
        };
        let call = Call::start(&self.lb, service, request.method(), request.headers());
        Box::pin(balanced(inner, call, request))
    }
}

async fn balanced<S, B, R>(
    mut inner: S,
    mut call: Call,
    mut request: http::Request<B>,
) -> Result<http::Response<R>, BoxError>
where
    S: Service<http::Request<B>, Response = http::Response<R>>,
    S::Error: Into<BoxError>,
    B: Clone,
{
    // `http://user:password@service/...`: the credentials go as a header, as reqwest sends them.
    if request
        .uri()
        .authority()
        .is_some_and(|a| a.as_str().contains('@'))
    {
        let (_, authorization) = feign_core::redact::split_basic_auth(&request.uri().to_string());
        if let Some(value) = authorization {
            request
                .headers_mut()
                .entry(http::header::AUTHORIZATION)
                .or_insert(value);
        }
    }
    let path = request
        .uri()
        .path_and_query()
        .map_or("", |p| p.as_str())
        .to_owned();
    loop {
        let delay = {
            let attempt = call.choose(request.headers())?;
            let mut sent = request.clone();
            *sent.uri_mut() = http::Uri::try_from(attempt.url(&path))
                .map_err(|_| feign_core::Error::request("the instance's URL is not a valid URI"))?;
            attempt.authorize(sent.headers_mut());
            let ready: Result<&mut S, BoxError> = inner.ready().await.map_err(Into::into);
            let result = match ready {
                Ok(ready) => ready.call(sent).await.map_err(Into::into),
                Err(error) => Err(error),
            };
            let ended = match &result {
                Ok(response) => Ended::Response(response.status(), response.headers()),
                Err(error) => classify(&**error),
            };
            match call.ended(attempt, ended, true) {
                Next::Retry(delay) => delay,
                Next::Done => return result,
            }
        };
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
    }
}

/// What a transport's error says about the attempt, read from the `io::Error` in its chain.
fn classify(error: &(dyn StdError + Send + Sync + 'static)) -> Ended<'static> {
    let mut next: Option<&(dyn StdError + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            match io.kind() {
                io::ErrorKind::ConnectionRefused
                | io::ErrorKind::AddrNotAvailable
                | io::ErrorKind::NetworkUnreachable
                | io::ErrorKind::HostUnreachable => return Ended::Connect,
                io::ErrorKind::TimedOut => return Ended::Timeout,
                _ => {}
            }
        }
        next = e.source();
    }
    Ended::Transport
}
