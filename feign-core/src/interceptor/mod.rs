//! Interceptors beyond a first program's: code that sees and may change every request before
//! it is sent ([`interceptor_fn`], [`DefaultHeaders`], [`RequestId`], trace context with
//! [`W3cTraceparent`], refreshing tokens through a [`TokenProvider`]), and every response as it
//! arrives ([`ResponseInterceptor`]).
//!
//! The trait and the interceptors a first program uses,
//! [`RequestInterceptor`], [`RequestTemplate`],
//! [`BearerAuth`](crate::BearerAuth) and [`BasicAuth`](crate::BasicAuth), are at the crate root.

pub(crate) mod auth;
mod defaults;
mod headers;
pub(crate) mod request;
mod response;
pub(crate) mod template;
mod token;
mod trace_context;
mod traceparent;

use async_trait::async_trait;

use crate::{Error, RequestInterceptor, RequestTemplate};

pub(crate) use defaults::Defaults;
pub use headers::{DefaultHeaders, RequestId};
pub use response::{
    response_interceptor_fn, FnResponseInterceptor, ResponseContext, ResponseInterceptor,
};
pub use token::{token_provider_fn, AccessToken, FnTokenProvider, TokenProvider};
pub use trace_context::{TraceContext, TRACEPARENT, TRACESTATE};
pub use traceparent::{TraceContextProvider, W3cTraceparent};

/// Makes a [`RequestInterceptor`] of a synchronous closure.
///
/// ```
/// use feign_core::RequestTemplate;
/// use feign_core::interceptor::interceptor_fn;
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
