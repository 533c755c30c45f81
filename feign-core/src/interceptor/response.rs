//! Response interceptors: code that sees every response before the decoders.

use async_trait::async_trait;

use super::RequestTemplate;
use crate::{Error, Response};

/// Sees every response of a client before it is decoded (OpenFeign's `ResponseInterceptor`):
/// status, headers and the whole body. It returns the response to go on with (the one it got,
/// or another) or an error, which ends the attempt as a transport error would: the retry policy
/// then decides whether to try again.
///
/// Interceptors run in registration order, once per attempt that got a response, after the
/// body is read and the load balancer has recorded the attempt's status, and before the
/// status sends the response to the decoder (2xx) or the error decoder. So an interceptor may
/// turn a 503 into a 200 or a 200 into an error. A 2xx body a
/// [`StreamingResponse`](crate::StreamingResponse) method leaves streaming is not in memory:
/// interceptors do not see those responses (they see every other, non-2xx included).
///
/// The future is boxed (through `async_trait`) so the trait stays object-safe and clients can
/// hold a list of `Arc<dyn ResponseInterceptor>`. For synchronous logic use
/// [`response_interceptor_fn`].
#[async_trait]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a response interceptor",
    note = "implement `feign_core::interceptor::ResponseInterceptor`, or wrap a closure with `feign_core::interceptor::response_interceptor_fn`"
)]
pub trait ResponseInterceptor: Send + Sync + 'static {
    /// Inspects `response`, returning it, a replacement, or an error.
    async fn intercept(
        &self,
        response: Response,
        context: &ResponseContext<'_>,
    ) -> Result<Response, Error>;
}

/// What a [`ResponseInterceptor`] knows of the request a response answers.
#[derive(Debug, Clone, Copy)]
pub struct ResponseContext<'a> {
    pub(crate) request: &'a RequestTemplate,
    pub(crate) attempt: u32,
}

impl ResponseContext<'_> {
    /// The request as the request interceptors left it (path and query relative to the
    /// instance, headers, body).
    pub fn request(&self) -> &RequestTemplate {
        self.request
    }

    /// The attempt this response answers, from 1.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The method key, `Trait#method`.
    pub fn method_key(&self) -> &'static str {
        self.request.method_key()
    }
}

/// Makes a [`ResponseInterceptor`] of a synchronous closure.
///
/// ```
/// use feign_core::{Error, Response};
/// use feign_core::interceptor::response_interceptor_fn;
/// // A service that answers 200 with an error document: make it a failed call.
/// let unwrap = response_interceptor_fn(|response: Response, _| {
///     if response.body().starts_with(b"{\"error\"") {
///         return Err(Error::request("the service answered with an error document"));
///     }
///     Ok(response)
/// });
/// # let _ = unwrap;
/// ```
pub fn response_interceptor_fn<F>(f: F) -> FnResponseInterceptor<F>
where
    F: Fn(Response, &ResponseContext<'_>) -> Result<Response, Error> + Send + Sync + 'static,
{
    FnResponseInterceptor(f)
}

/// A [`ResponseInterceptor`] made by [`response_interceptor_fn`].
#[derive(Clone)]
pub struct FnResponseInterceptor<F>(F);

#[async_trait]
impl<F> ResponseInterceptor for FnResponseInterceptor<F>
where
    F: Fn(Response, &ResponseContext<'_>) -> Result<Response, Error> + Send + Sync + 'static,
{
    async fn intercept(
        &self,
        response: Response,
        context: &ResponseContext<'_>,
    ) -> Result<Response, Error> {
        (self.0)(response, context)
    }
}

impl<F> std::fmt::Debug for FnResponseInterceptor<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnResponseInterceptor")
    }
}
