//! The transport: sends one request and returns the response head with a streaming body.
//!
//! [`ReqwestClient`] is every client's default (rustls, no redirects); [`TowerClient`] puts any
//! tower service in its place, and [`client_fn`] a closure. A [`Client`] of one's own is set
//! with [`Builder::client`](crate::Builder::client).

mod reqwest_client;
mod tower_client;
mod url_cache;

use std::any::Any;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::body::RequestBody;
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
///
/// The request body is a [`RequestBody`]: buffered bytes ([`RequestBody::as_bytes`]) or a
/// stream that can be read once; it is an `http_body::Body`, so hyper-based clients take it
/// as it is.
#[async_trait]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an HTTP client",
    note = "implement `feign_core::client::Client`, use `.tower_client(service)`, or wrap a closure with `feign_core::client::client_fn`"
)]
pub trait Client: Send + Sync + 'static {
    /// Sends `request` and returns once the response head has arrived.
    async fn send(
        &self,
        request: http::Request<RequestBody>,
        options: &SendOptions,
    ) -> Result<http::Response<ResponseBody>, Error>;
}

/// The request body type a [`TowerClient`] service or a [`client_fn`] closure takes:
/// [`RequestBody`] itself, or `Bytes` for a transport that handles buffered bodies only (a
/// streamed body then fails the call before anything is sent, saying so).
pub trait FromRequestBody: Sized + Send + 'static {
    /// Converts the body of one attempt.
    fn from_request_body(body: RequestBody) -> Result<Self, Error>;
}

impl FromRequestBody for RequestBody {
    fn from_request_body(body: RequestBody) -> Result<Self, Error> {
        Ok(body)
    }
}

impl FromRequestBody for Bytes {
    fn from_request_body(body: RequestBody) -> Result<Self, Error> {
        body.into_bytes().map_err(|_| {
            Error::request(
                "this transport takes buffered bodies only (http::Request<Bytes>): a streamed body needs one that takes http::Request<feign_core::body::RequestBody>",
            )
        })
    }
}

/// `request` with its body converted for a transport that takes `B`.
pub(crate) fn convert_body<B: FromRequestBody>(
    request: http::Request<RequestBody>,
) -> Result<http::Request<B>, Error> {
    let (parts, body) = request.into_parts();
    Ok(http::Request::from_parts(
        parts,
        B::from_request_body(body)?,
    ))
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
        request: http::Request<RequestBody>,
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

/// Makes a [`Client`] of a closure returning a future. The closure takes
/// `http::Request<RequestBody>`, or `http::Request<Bytes>` when it handles buffered bodies only
/// (see [`FromRequestBody`]).
pub fn client_fn<F, B, Fut>(f: F) -> FnClient<F, B>
where
    F: Fn(http::Request<B>) -> Fut + Send + Sync + 'static,
    B: FromRequestBody,
    Fut: std::future::Future<Output = Result<http::Response<ResponseBody>, Error>> + Send + 'static,
{
    FnClient(f, PhantomData)
}

/// A [`Client`] made by [`client_fn`].
pub struct FnClient<F, B = RequestBody>(F, PhantomData<fn(B)>);

impl<F: Clone, B> Clone for FnClient<F, B> {
    fn clone(&self) -> Self {
        FnClient(self.0.clone(), PhantomData)
    }
}

#[async_trait]
impl<F, B, Fut> Client for FnClient<F, B>
where
    F: Fn(http::Request<B>) -> Fut + Send + Sync + 'static,
    B: FromRequestBody,
    Fut: std::future::Future<Output = Result<http::Response<ResponseBody>, Error>> + Send + 'static,
{
    async fn send(
        &self,
        request: http::Request<RequestBody>,
        _options: &SendOptions,
    ) -> Result<http::Response<ResponseBody>, Error> {
        (self.0)(convert_body(request)?).await
    }
}

impl<F, B> std::fmt::Debug for FnClient<F, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnClient")
    }
}
