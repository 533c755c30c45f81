//! The transport: sends one request and returns the response head with a streaming body.

mod reqwest_client;
mod tower_client;
mod url_cache;

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::BoxError;
use crate::Error;

pub use reqwest_client::{reqwest_builder, ReqwestClient};
pub use tower_client::TowerClient;

/// A streaming response body as a [`Client`] returns it; the pipeline reads it within the
/// size limit and read timeout.
pub type ResponseBody = http_body_util::combinators::UnsyncBoxBody<Bytes, BoxError>;

/// Sends one attempt of a call.
///
/// The future is boxed (through `async_trait`) so the trait stays object-safe and clients can
/// hold an `Arc<dyn Client>`. Implementations should report a failure to connect with
/// [`Error::connect`] (the call may then be retried whatever its method) and other transport
/// failures with [`Error::transport`]. Read and total timeouts and the body size limit are
/// enforced by the pipeline, not by the client.
#[async_trait]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an HTTP client",
    note = "implement `feign_core::Client`, use `.tower_client(service)`, or wrap a closure with `feign_core::client_fn`"
)]
pub trait Client: Send + Sync + 'static {
    /// Sends `request` and returns once the response head has arrived.
    async fn send(
        &self,
        request: http::Request<Bytes>,
        options: &SendOptions,
    ) -> Result<http::Response<ResponseBody>, Error>;
}

/// The transport a built client calls: the built-in reqwest client directly, without boxing
/// each attempt's future, or any other through its trait object.
#[derive(Clone)]
pub(crate) enum Transport {
    /// The default transport, called as its concrete type.
    Reqwest(ReqwestClient),
    /// A transport the application chose.
    Custom(Arc<dyn Client>),
}

impl Transport {
    /// `client`, called directly when it is the built-in reqwest client.
    pub(crate) fn of(client: impl Client) -> Transport {
        match (&client as &dyn Any).downcast_ref::<ReqwestClient>() {
            Some(reqwest) => Transport::Reqwest(reqwest.clone()),
            None => Transport::Custom(Arc::new(client)),
        }
    }

    /// Sends one attempt, as [`Client::send`].
    pub(crate) async fn send(
        &self,
        request: http::Request<Bytes>,
        options: &SendOptions,
    ) -> Result<http::Response<ResponseBody>, Error> {
        match self {
            Transport::Reqwest(reqwest) => reqwest.execute(request, options).await,
            Transport::Custom(client) => client.send(request, options).await,
        }
    }
}

/// Per-attempt transport settings a [`Client`] should honour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SendOptions {
    /// How long establishing a connection may take.
    pub connect_timeout: Duration,
    /// Whether same-origin redirects are followed (at most 5).
    pub follow_redirects: bool,
}

/// Makes a [`Client`] of a closure returning a future.
pub fn client_fn<F, Fut>(f: F) -> FnClient<F>
where
    F: Fn(http::Request<Bytes>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<http::Response<ResponseBody>, Error>> + Send + 'static,
{
    FnClient(f)
}

/// A [`Client`] made by [`client_fn`].
#[derive(Clone)]
pub struct FnClient<F>(F);

#[async_trait]
impl<F, Fut> Client for FnClient<F>
where
    F: Fn(http::Request<Bytes>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<http::Response<ResponseBody>, Error>> + Send + 'static,
{
    async fn send(
        &self,
        request: http::Request<Bytes>,
        _options: &SendOptions,
    ) -> Result<http::Response<ResponseBody>, Error> {
        (self.0)(request).await
    }
}

impl<F> std::fmt::Debug for FnClient<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnClient")
    }
}
