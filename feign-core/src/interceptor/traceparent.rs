//! The interceptor that propagates W3C Trace Context to the services a client calls.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use http::header::{HeaderName, HeaderValue};

use super::trace_context::{TraceContext, TRACEPARENT, TRACESTATE};
use super::{RequestInterceptor, RequestTemplate};
use crate::Error;

/// Says which trace the calls made now belong to: the source of [`W3cTraceparent`].
///
/// The ready source is [`TraceContext::current`] (a task-local set with
/// [`TraceContext::scope`]). An application that already tracks traces, e.g. with
/// OpenTelemetry, plugs its own in with a closure:
///
/// ```text
/// W3cTraceparent::with_provider(|| {
///     let cx = opentelemetry::Context::current();
///     let span = cx.span().span_context().clone();
///     span.is_valid().then(|| TraceContext::new(
///         u128::from_be_bytes(span.trace_id().to_bytes()),
///         u64::from_be_bytes(span.span_id().to_bytes()),
///         span.trace_flags().to_u8(),
///     ).ok()).flatten()
/// })
/// ```
pub trait TraceContextProvider: Send + Sync + 'static {
    /// The context of the work in progress, or `None` to start a new trace.
    fn current(&self) -> Option<TraceContext>;
}

impl<F> TraceContextProvider for F
where
    F: Fn() -> Option<TraceContext> + Send + Sync + 'static,
{
    fn current(&self) -> Option<TraceContext> {
        self()
    }
}

/// Sets `traceparent` (and `tracestate` when the parent has one) on every request, so the
/// called service continues the caller's trace.
///
/// The parent comes from a [`TraceContextProvider`], [`TraceContext::current`] by default. Each
/// call gets a new span id under the parent's trace id and flags; without a parent, a new random
/// trace is started (sampled unless [`W3cTraceparent::sample_new_traces`] says otherwise). All
/// attempts of a call carry the same value. A request that already has a `traceparent` (set by
/// a `#[header]` parameter, say) keeps it. The trace and span ids are recorded on the call's
/// span as `trace_id` and `span_id`.
///
/// ```
/// use feign_core::interceptor::{TraceContext, W3cTraceparent};
///
/// // In a server handler: continue the caller's trace for the calls the handler makes.
/// # async fn handle(headers: feign_core::http::HeaderMap) {
/// let parent = TraceContext::from_headers(&headers).unwrap_or_else(|| TraceContext::new_root(true));
/// parent.scope(async {
///     // orders.get_order(42).await ... carries `traceparent: 00-<same trace id>-<new id>-01`
/// }).await;
/// # }
/// let propagate = W3cTraceparent::new(); // .interceptor(propagate) on the client builder
/// # let _ = propagate;
/// ```
#[derive(Clone)]
pub struct W3cTraceparent {
    provider: Arc<dyn TraceContextProvider>,
    sample_new_traces: bool,
}

impl Default for W3cTraceparent {
    fn default() -> Self {
        W3cTraceparent::with_provider(TraceContext::current)
    }
}

impl W3cTraceparent {
    /// Propagates [`TraceContext::current`].
    pub fn new() -> Self {
        W3cTraceparent::default()
    }

    /// Propagates the context `provider` says is current.
    pub fn with_provider(provider: impl TraceContextProvider) -> Self {
        W3cTraceparent {
            provider: Arc::new(provider),
            sample_new_traces: true,
        }
    }

    /// Whether traces this interceptor starts (when there is no parent) are marked sampled.
    /// Default: `true`.
    #[must_use]
    pub fn sample_new_traces(mut self, sampled: bool) -> Self {
        self.sample_new_traces = sampled;
        self
    }
}

#[async_trait]
impl RequestInterceptor for W3cTraceparent {
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error> {
        let traceparent = HeaderName::from_static(TRACEPARENT);
        if request.headers.contains_key(&traceparent) {
            return Ok(());
        }
        let context = match self.provider.current() {
            Some(parent) => parent.child(),
            None => TraceContext::new_root(self.sample_new_traces),
        };
        let value = HeaderValue::try_from(context.traceparent())
            .map_err(|_| Error::interceptor("traceparent is not a header value"))?;
        request.headers.insert(traceparent, value);
        if let Some(state) = context
            .trace_state()
            .and_then(|s| HeaderValue::try_from(s).ok())
        {
            request
                .headers
                .insert(HeaderName::from_static(TRACESTATE), state);
        }
        let span = tracing::Span::current();
        if !span.is_disabled() {
            span.record("trace_id", tracing::field::display(context.trace_id_hex()));
            span.record(
                "span_id",
                tracing::field::display(format_args!("{:016x}", context.span_id())),
            );
        }
        Ok(())
    }
}

impl fmt::Debug for W3cTraceparent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("W3cTraceparent")
            .field("sample_new_traces", &self.sample_new_traces)
            .finish_non_exhaustive()
    }
}
