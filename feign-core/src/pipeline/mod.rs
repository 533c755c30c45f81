//! The call pipeline: arguments → interceptors → target → client → decoders, with retries.

mod args;
mod around;
mod body;
mod call;
mod headers;
#[cfg(feature = "config")]
mod live;
mod metrics;
mod observe;
mod receive;
mod span;
mod upload;
mod validate;

use std::fmt;
use std::sync::Arc;

use http::HeaderValue;
use serde::de::DeserializeOwned;

use crate::client::Transport;
use crate::codec::{Decoder, Encoder, ErrorDecoder};
use crate::interceptor::{RequestInterceptor, ResponseInterceptor};
use crate::meta::{ClientMeta, MethodMeta};
use crate::options::{LogLevel, Options};
use crate::resilience::Resilience;
use crate::resolve::Resolver;
use crate::retry::RetryPolicy;
use crate::{Error, Response, ResponseEntity, StreamingResponse};
use receive::Receive;

pub use args::{HeaderMapArg, HeaderPart, RequestArgs};
pub use around::CallRequest;
pub(crate) use around::{wrap, Wrap};
#[cfg(feature = "config")]
pub(crate) use live::LiveCore;
pub(crate) use validate::{header_name, is_clean_header_value, is_forbidden_header};

/// Runs a call in its span and records its metrics. A macro rather than an `async fn`: another
/// layer of future would be moved, whole, on every call; the span's wrapper is paid only when a
/// subscriber wants the span.
macro_rules! observed_run {
    ($core:expr, $args:expr, $optional:expr) => {{
        let observation =
            observe::CallObservation::start($core.inner.client_meta, $args.meta, $args.state);
        match &$core.inner.around {
            None => {
                let result = if observation.span().is_disabled() {
                    call::run(&$core.inner, $args, $optional, &observation).await
                } else {
                    tracing::Instrument::instrument(
                        call::run(&$core.inner, $args, $optional, &observation),
                        observation.span().clone(),
                    )
                    .await
                };
                observation.finish(&result);
                result
            }
            Some(service) => {
                // The layers' futures are `'static`: they share the observation. Boxed, so
                // clients without layers do not carry this path's state in their futures.
                let observation = Arc::new(observation);
                let run = Box::pin(around::run_around(
                    &$core.inner,
                    service.clone(),
                    $args,
                    $optional,
                    observation.clone(),
                ));
                let result = if observation.span().is_disabled() {
                    run.await
                } else {
                    tracing::Instrument::instrument(run, observation.span().clone()).await
                };
                observation.finish(&result);
                // Layers answer a response read whole; a streaming method gets it as one chunk.
                result.map(|response| response.map(receive::Receive::whole))
            }
        }
    }};
}

/// A built client's shared state; generated clients hold one and call it for every method.
#[derive(Clone)]
pub struct Core {
    inner: Arc<CoreInner>,
    /// A live client's current core, which its calls start from; `None`: `inner` is.
    #[cfg(feature = "config")]
    live: Option<Arc<LiveCore>>,
}

/// Where calls go.
pub(crate) enum Target {
    /// A fixed base URL (userinfo removed) and the `Authorization` its userinfo stood for.
    Fixed {
        base: Box<str>,
        authorization: Option<HeaderValue>,
    },
    /// An instance chosen per attempt.
    Resolver(Arc<dyn Resolver>),
}

/// Size limits checked on every call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) response_bytes: usize,
    pub(crate) request_target: usize,
    pub(crate) header_bytes: usize,
}

pub(crate) struct CoreInner {
    pub(crate) client_meta: &'static ClientMeta,
    pub(crate) target: Target,
    /// The `path = "..."` prefix, without a trailing slash.
    pub(crate) prefix: Box<str>,
    pub(crate) interceptors: Box<[Arc<dyn RequestInterceptor>]>,
    /// Run over every attempt's response, in order, before the status is judged.
    pub(crate) response_interceptors: Box<[Arc<dyn ResponseInterceptor>]>,
    /// The layers around the call over its inner service; `None` without layers.
    pub(crate) around: Option<around::AroundService>,
    pub(crate) compression: Compression,
    /// `None`: the default JSON encoder, called without type erasure.
    pub(crate) encoder: Option<Arc<dyn Encoder>>,
    /// `None`: the default JSON decoder, called without type erasure.
    pub(crate) decoder: Option<Arc<dyn Decoder>>,
    pub(crate) error_decoder: Arc<dyn ErrorDecoder>,
    pub(crate) retry: Arc<dyn RetryPolicy>,
    /// Hedged requests; `None`: off.
    pub(crate) hedging: Option<crate::hedging::Hedging>,
    pub(crate) client: Transport,
    pub(crate) options: Options,
    pub(crate) log_level: LogLevel,
    pub(crate) limits: Limits,
    /// A 404 goes to the decoder rather than the error decoder.
    pub(crate) dismiss_404: bool,
    pub(crate) resilience: Resilience,
}

/// What is gzipped on the wire.
#[derive(Debug, Clone, Default)]
pub(crate) struct Compression {
    /// Request bodies to compress; `None`: none.
    pub(crate) request: Option<crate::RequestCompression>,
    /// Ask for gzip responses and decode those the transport left compressed.
    pub(crate) response: bool,
}

impl Core {
    /// The core of `inner`, under `layers` (the first outermost) when there are any.
    pub(crate) fn new(mut inner: CoreInner, layers: &[Wrap]) -> Core {
        Core {
            inner: Arc::new_cyclic(|core| {
                inner.around = around::build(core, layers);
                inner
            }),
            #[cfg(feature = "config")]
            live: None,
        }
    }

    /// The core a call runs on: this one, or a live client's current one, kept in `snapshot`
    /// for the call's duration.
    #[inline]
    fn for_call<'a>(&'a self, snapshot: &'a mut Option<Core>) -> &'a Core {
        #[cfg(feature = "config")]
        if let Some(live) = &self.live {
            return snapshot.insert(live.snapshot());
        }
        let _ = snapshot;
        self
    }

    /// Starts the arguments of a call of `meta`.
    pub fn request(&self, meta: &'static MethodMeta) -> RequestArgs {
        let state = observe::method_state(self.inner.client_meta, meta);
        RequestArgs::new(meta, state, self.inner.encoder.clone())
    }

    /// Expands the arguments into the request interceptors would see, without sending it
    /// (for benchmarks and tests of template expansion).
    #[doc(hidden)]
    pub fn prepare(&self, args: RequestArgs) -> Result<crate::RequestTemplate, Error> {
        let key = args.meta.key;
        args.into_template(&self.inner.prefix, self.inner.client_meta.service)
            .map_err(|e| e.with_method_key(key))
    }

    /// Runs the call: a non-2xx response becomes the ErrorDecoder's error.
    pub async fn execute(&self, args: RequestArgs) -> Result<Response, Error> {
        let key = args.meta.key;
        let mut snapshot = None;
        let core = self.for_call(&mut snapshot);
        let result = if core.inner.resilience.guards_calls() {
            core.guarded(args, false).await
        } else {
            observed_run!(core, args, false)
        };
        match result {
            Ok(Some(response)) => Ok(response),
            Ok(None) => Err(Error::request("response unexpectedly dismissed").with_method_key(key)),
            Err(e) => Err(e),
        }
    }

    /// Runs the call, mapping a 404 to `None`.
    pub async fn execute_optional(&self, args: RequestArgs) -> Result<Option<Response>, Error> {
        let mut snapshot = None;
        let core = self.for_call(&mut snapshot);
        if core.inner.resilience.guards_calls() {
            core.guarded(args, true).await
        } else {
            observed_run!(core, args, true)
        }
    }

    /// Runs the call, leaving a 2xx body streaming: the call ends, for metrics, the breaker
    /// and the balancer, when the head arrives. A non-2xx becomes the ErrorDecoder's error.
    pub async fn execute_streaming(&self, args: RequestArgs) -> Result<StreamingResponse, Error> {
        let key = args.meta.key;
        match self.streaming(args, false).await {
            Ok(Some(response)) => Ok(response),
            Ok(None) => Err(Error::request("response unexpectedly dismissed").with_method_key(key)),
            Err(e) => Err(e),
        }
    }

    /// Runs the call as [`execute_streaming`](Core::execute_streaming), mapping a 404 to `None`.
    pub async fn execute_streaming_optional(
        &self,
        args: RequestArgs,
    ) -> Result<Option<StreamingResponse>, Error> {
        self.streaming(args, true).await
    }

    async fn streaming(
        &self,
        args: RequestArgs,
        optional: bool,
    ) -> Result<Option<StreamingResponse>, Error> {
        let mut snapshot = None;
        let core = self.for_call(&mut snapshot);
        if core.inner.resilience.guards_calls() {
            core.guarded(args, optional).await
        } else {
            observed_run!(core, args, optional)
        }
    }

    /// The call, in its span and metrics, inside the client's circuit breaker and bulkhead.
    async fn guarded<R: Receive>(
        &self,
        args: RequestArgs,
        optional: bool,
    ) -> Result<Option<R>, Error> {
        let meta = args.meta;
        self.inner
            .resilience
            .guard(meta, || async { observed_run!(self, args, optional) })
            .await
    }

    /// Whether the client has a fallback, so arguments a call consumes must be kept for it.
    pub fn has_fallback(&self) -> bool {
        self.inner.resilience.has_fallback()
    }

    /// The client's fallback (`T` is its trait object) for a call that ended in `error`, or
    /// `error` itself when the client has no fallback or the error does not call for one.
    pub fn fallback<T: ?Sized + Send + Sync + 'static>(
        &self,
        error: Error,
    ) -> Result<Arc<T>, Error> {
        self.inner.resilience.fallback(error)
    }

    /// Decodes a 2xx body into `T` with the client's Decoder.
    pub fn decode_body<T: DeserializeOwned>(
        &self,
        meta: &'static MethodMeta,
        response: Response,
    ) -> Result<T, Error> {
        self.decode_ref(meta, &response)
    }

    /// Decodes a 2xx body into `T`, keeping its status and headers beside it.
    pub fn decode_entity<T: DeserializeOwned>(
        &self,
        meta: &'static MethodMeta,
        response: Response,
    ) -> Result<ResponseEntity<T>, Error> {
        let body = self.decode_ref(meta, &response)?;
        let (status, headers, _) = response.into_parts();
        Ok(ResponseEntity::new(status, headers, body))
    }

    fn decode_ref<T: DeserializeOwned>(
        &self,
        meta: &'static MethodMeta,
        response: &Response,
    ) -> Result<T, Error> {
        let result = match &self.inner.decoder {
            // Only a dismissed 404 gets here: the JSON decoder reads its empty body as `null`,
            // OpenFeign's "empty value" of the type (`None`, `Value::Null`, or a decode error).
            None if response.status() == http::StatusCode::NOT_FOUND
                && response.body().is_empty() =>
            {
                serde_json::from_slice(b"null").map_err(Error::decode)
            }
            None => crate::codec::decode_json(response),
            Some(decoder) => crate::codec::decode_erased(&**decoder, response),
        };
        result.map_err(|e| e.with_method_key(meta.key))
    }

    /// The body as UTF-8 text; invalid UTF-8 is a decode error.
    pub fn body_string(
        &self,
        meta: &'static MethodMeta,
        response: Response,
    ) -> Result<String, Error> {
        String::from_utf8(Vec::from(response.into_body()))
            .map_err(|e| Error::decode(e).with_method_key(meta.key))
    }
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut snapshot = None;
        let inner = &*self.for_call(&mut snapshot).inner;
        let mut d = f.debug_struct("Client");
        d.field("service", &inner.client_meta.service);
        match &inner.target {
            Target::Fixed { base, .. } => d.field("url", &crate::redact::url(base).to_string()),
            Target::Resolver(_) => d.field("url", &"<load balanced>"),
        };
        d.field("interceptors", &inner.interceptors.len())
            .field("options", &inner.options)
            .field("log_level", &inner.log_level)
            .finish_non_exhaustive()
    }
}
