//! [`RequestInterceptor`], the trait every request interceptor implements.

use async_trait::async_trait;

use crate::{Error, RequestTemplate};

/// Sees and may change every request of a client before it is sent: method, URL, headers and
/// body, with the method key at hand. Interceptors run in registration order, once per call
/// (so every retry of a call carries the same headers); an error stops the call before anything
/// is sent.
///
/// The future is boxed (through `async_trait`) so the trait stays object-safe and clients can
/// hold a list of `Arc<dyn RequestInterceptor>`. For synchronous logic use
/// [`interceptor_fn`](crate::interceptor::interceptor_fn).
#[async_trait]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a request interceptor",
    note = "implement `feign_core::RequestInterceptor`, or wrap a closure with `feign_core::interceptor::interceptor_fn`"
)]
pub trait RequestInterceptor: Send + Sync + 'static {
    /// Inspects or changes `request`.
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error>;
}
