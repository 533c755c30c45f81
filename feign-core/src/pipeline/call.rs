//! A built client's core, and one call through it, from the generated method to its return
//! value: the circuit breaker, bulkhead and adaptive limit around everything; inside them the
//! call's span and metrics; the request interceptors; the layers, if any; the exchange under
//! them ([`retrying`]); and the method's return kind made from the answer, so a body that does
//! not decode is the call's outcome for all of them.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use super::args::RequestArgs;
use super::around::{self, AroundService};
use super::exchange::{Exchange, Expect, Target};
#[cfg(feature = "config")]
use super::live::Live;
use super::observe::{method_state, CallObservation};
use super::receive::Receive;
use super::retrying;
use super::returns::{Decoding, ReturnKind};
use crate::meta::{ClientMeta, MethodMeta};
use crate::resilience::Resilience;
use crate::Error;
use crate::{Decoder, Encoder};
use crate::{RequestInterceptor, RequestTemplate};

/// A built client's shared state; generated clients hold one and call it for every method.
#[derive(Clone)]
pub struct Core {
    inner: Arc<CoreInner>,
    /// A live client's current core, which its calls start from; `None`: `inner` is.
    #[cfg(feature = "config")]
    live: Option<Arc<Live<CoreInner>>>,
}

/// What a call runs on above the layers, and the exchange under them.
pub(crate) struct CoreInner {
    pub(crate) client_meta: &'static ClientMeta,
    /// The `path = "..."` prefix, without a trailing slash.
    pub(crate) prefix: Box<str>,
    pub(crate) interceptors: Box<[Arc<dyn RequestInterceptor>]>,
    /// `None`: the default JSON encoder, called without type erasure.
    pub(crate) encoder: Option<Arc<dyn Encoder>>,
    /// `None`: the default JSON decoder, called without type erasure.
    pub(crate) decoder: Option<Arc<dyn Decoder>>,
    pub(crate) resilience: Resilience,
    /// The layers around the call over its innermost service; `None` without layers.
    pub(crate) around: Option<AroundService>,
    pub(crate) exchange: Arc<Exchange>,
}

impl Core {
    /// The core of `inner`.
    pub(crate) fn new(inner: CoreInner) -> Core {
        Core {
            inner: Arc::new(inner),
            #[cfg(feature = "config")]
            live: None,
        }
    }

    /// What a call runs on: this core's, or a live client's current one, kept in `snapshot`
    /// for the call's duration.
    #[inline]
    fn for_call<'a>(&'a self, snapshot: &'a mut Option<Arc<CoreInner>>) -> &'a CoreInner {
        #[cfg(feature = "config")]
        if let Some(live) = &self.live {
            return snapshot.insert(live.load());
        }
        let _ = snapshot;
        &self.inner
    }

    /// Starts the arguments of a call of `meta`.
    pub fn request(&self, meta: &'static MethodMeta) -> RequestArgs {
        let state = method_state(self.inner.client_meta, meta);
        RequestArgs::new(meta, state, self.inner.encoder.clone())
    }

    /// Expands the arguments into the request interceptors would see, without sending it
    /// (for benchmarks and tests of template expansion).
    #[doc(hidden)]
    pub fn prepare(&self, args: RequestArgs) -> Result<RequestTemplate, Error> {
        let key = args.meta.key;
        args.into_template(&self.inner.prefix, self.inner.client_meta.service)
            .map_err(|e| e.with_method_key(key))
    }

    /// Runs a call of `args`: `K`, the method's return kind, makes its value from the answer.
    /// A non-2xx response (but a 404 that `K` or `decode404` takes) is the ErrorDecoder's
    /// error.
    pub async fn call<K: ReturnKind>(&self, args: RequestArgs) -> Result<K::Output, Error> {
        let mut snapshot = None;
        let inner = self.for_call(&mut snapshot);
        if inner.resilience.guards_calls() {
            let meta = args.meta;
            inner
                .resilience
                .guard(meta, || inner.observed::<K>(args))
                .await
        } else {
            inner.observed::<K>(args).await
        }
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

    /// This core, made live: calls start from what the returned handle last put in force.
    #[cfg(feature = "config")]
    pub(crate) fn into_live(self) -> (Core, Arc<Live<CoreInner>>) {
        let live = Arc::new(Live::new(self.inner.clone()));
        let core = Core {
            inner: self.inner,
            live: Some(live.clone()),
        };
        (core, live)
    }

    /// What is in force.
    #[cfg(feature = "config")]
    pub(crate) fn into_inner(self) -> Arc<CoreInner> {
        self.inner
    }
}

impl CoreInner {
    /// The call in its span, its metrics recording how it ended.
    async fn observed<K: ReturnKind>(&self, args: RequestArgs) -> Result<K::Output, Error> {
        let observation = CallObservation::start(self.client_meta, args.meta, args.state);
        let observed = Observed::new(observation, self.around.as_ref());
        let result = if observed.span().is_disabled() {
            self.run::<K>(args, &observed).await
        } else {
            let span = observed.span().clone();
            tracing::Instrument::instrument(self.run::<K>(args, &observed), span).await
        };
        observed.finish(result.as_ref().map(drop));
        result
    }

    /// Interceptors, then the layers or the exchange, then the return kind.
    async fn run<K: ReturnKind>(
        &self,
        args: RequestArgs,
        observed: &Observed<'_>,
    ) -> Result<K::Output, Error> {
        let key = args.meta.key;
        let template = self.intercepted(args).await?;
        let expect = Expect {
            not_found: K::NOT_FOUND_IS_ANSWER,
        };
        let answer: K::Received = match observed {
            Observed::Direct(observation) => {
                retrying::run(&self.exchange, template, expect, observation).await?
            }
            // Boxed: clients without layers do not carry this path's state in their futures.
            Observed::Layered(layers, observation) => {
                Box::pin(around::run(
                    layers,
                    &self.exchange,
                    template,
                    expect,
                    observation.clone(),
                ))
                .await?
            }
        };
        observed.on_response(answer.status());
        let decoding = Decoding {
            decoder: self.decoder.as_deref(),
            key,
        };
        K::make(answer, &decoding)
    }

    /// The arguments expanded into a request, and the request interceptors run over it.
    async fn intercepted(&self, args: RequestArgs) -> Result<RequestTemplate, Error> {
        let meta = args.meta;
        let mut template = args
            .into_template(&self.prefix, self.client_meta.service)
            .map_err(|e| e.with_method_key(meta.key))?;
        for interceptor in &self.interceptors {
            interceptor
                .intercept(&mut template)
                .await
                .map_err(|e| e.with_method_key(meta.key))?;
        }
        Ok(template)
    }
}

/// A call's observation, and the way the call goes: straight to the exchange with the
/// observation held in place, or through the layers, whose futures must be `'static`, with it
/// shared (only a layered call pays for that allocation).
enum Observed<'a> {
    Direct(CallObservation),
    Layered(&'a AroundService, Arc<CallObservation>),
}

impl<'a> Observed<'a> {
    /// `observation` of a call through `layers`, when the client has any.
    fn new(observation: CallObservation, layers: Option<&'a AroundService>) -> Self {
        match layers {
            None => Observed::Direct(observation),
            Some(layers) => Observed::Layered(layers, Arc::new(observation)),
        }
    }
}

impl Deref for Observed<'_> {
    type Target = CallObservation;

    fn deref(&self) -> &CallObservation {
        match self {
            Observed::Direct(observation) => observation,
            Observed::Layered(_, observation) => observation,
        }
    }
}

impl fmt::Debug for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut snapshot = None;
        let inner = self.for_call(&mut snapshot);
        let exchange = &inner.exchange;
        let mut d = f.debug_struct("Client");
        d.field("service", &inner.client_meta.service);
        match &exchange.target {
            Target::Fixed { base, .. } => d.field("url", &crate::redact::url(base).to_string()),
            Target::Resolver(_) => d.field("url", &"<load balanced>"),
        };
        d.field("interceptors", &inner.interceptors.len())
            .field("options", &exchange.options)
            .field("log_level", &exchange.log_level)
            .finish_non_exhaustive()
    }
}
