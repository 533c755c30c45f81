//! Request interceptors: code that sees and may change every request before it is sent.

mod auth;
mod defaults;
mod headers;
mod response;
mod template;
mod token;
mod trace_context;
mod traceparent;

use async_trait::async_trait;

use crate::Error;

pub use auth::{BasicAuth, BearerAuth};
pub(crate) use defaults::Defaults;
pub use headers::{DefaultHeaders, RequestId};
pub use response::{
    response_interceptor_fn, FnResponseInterceptor, ResponseContext, ResponseInterceptor,
};
pub use template::RequestTemplate;
pub use token::{token_provider_fn, AccessToken, FnTokenProvider, TokenProvider};
pub use trace_context::{TraceContext, TRACEPARENT, TRACESTATE};
pub use traceparent::{TraceContextProvider, W3cTraceparent};

/// Sees and may change every request of a client before it is sent: method, URL, headers and
/// body, with the method key at hand. Interceptors run in registration order, once per call
/// (so every retry of a call carries the same headers); an error stops the call before anything
/// is sent.
///
/// The future is boxed (through `async_trait`) so the trait stays object-safe and clients can
/// hold a list of `Arc<dyn RequestInterceptor>`. For synchronous logic use [`interceptor_fn`].
#[async_trait]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a request interceptor",
    note = "implement `feign_core::RequestInterceptor`, or wrap a closure with `feign_core::interceptor_fn`"
)]
pub trait RequestInterceptor: Send + Sync + 'static {
    /// Inspects or changes `request`.
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error>;
}

/// Makes a [`RequestInterceptor`] of a synchronous closure.
///
/// ```
/// use feign_core::{interceptor_fn, RequestTemplate};
/// let tenant = interceptor_fn(|req: &mut RequestTemplate| req.insert_header("x-tenant", "acme"));
/// # let _ = tenant;
/// ```
pub fn interceptor_fn<F>(f: F) -> FnInterceptor<F>
where
    F: Fn(&mut RequestTemplate) -> Result<(), Error> + Send + Sync + 'static,
{
    FnInterceptor(f)
}

/// A [`RequestInterceptor`] made by [`interceptor_fn`].
#[derive(Clone)]
pub struct FnInterceptor<F>(F);

#[async_trait]
impl<F> RequestInterceptor for FnInterceptor<F>
where
    F: Fn(&mut RequestTemplate) -> Result<(), Error> + Send + Sync + 'static,
{
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error> {
        (self.0)(request)
    }
}

impl<F> std::fmt::Debug for FnInterceptor<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnInterceptor")
    }
}
