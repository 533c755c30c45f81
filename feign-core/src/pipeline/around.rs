//! Middleware around the whole call: `tower::Layer`s over the call from the expanded request
//! to the response, for rate limits, concurrency limits and caches.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt as _};

use super::args::RequestArgs;
use super::call;
use super::observe::CallObservation;
use super::CoreInner;
use crate::interceptor::RequestTemplate;
use crate::{Error, Response};

/// The request a layer added with [`Builder::layer`](crate::Builder::layer) sees: the call's
/// request as the request interceptors left it (method, path and query relative to the
/// instance, headers, the buffered body, the method's key and route).
///
/// A layer may change it through [`template_mut`](CallRequest::template_mut); every header is
/// checked again before anything is sent.
pub struct CallRequest {
    template: RequestTemplate,
    /// A 404 is an answer (`Option` return types): it is not sent to the error decoder.
    pub(super) optional: bool,
    pub(super) observation: Arc<CallObservation>,
}

impl CallRequest {
    pub(super) fn new(
        template: RequestTemplate,
        optional: bool,
        observation: Arc<CallObservation>,
    ) -> CallRequest {
        CallRequest {
            template,
            optional,
            observation,
        }
    }

    /// The request.
    pub fn template(&self) -> &RequestTemplate {
        &self.template
    }

    /// The request, to change.
    pub fn template_mut(&mut self) -> &mut RequestTemplate {
        &mut self.template
    }

    /// The method key, `Trait#method`: a cache's or a limiter's key.
    pub fn method_key(&self) -> &'static str {
        self.template.method_key()
    }

    pub(super) fn into_template(self) -> RequestTemplate {
        self.template
    }
}

impl fmt::Debug for CallRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallRequest")
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}

/// The innermost service under the layers: the rest of the call, from the header checks through every
/// attempt (the balancer's pick, the transport, response interceptors, the error decoder and
/// retries). Its response is the one the decoder will get: a 2xx, or a 404 the method takes
/// as an answer; any other status is already the error decoder's error.
#[derive(Clone)]
pub(crate) struct CallService {
    core: Weak<CoreInner>,
}

/// The future of a [`CallService`] call.
type CallFuture = Pin<Box<dyn Future<Output = Result<Response, Error>> + Send>>;

impl Service<CallRequest> for CallService {
    type Response = Response;
    type Error = Error;
    type Future = CallFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: CallRequest) -> CallFuture {
        let core = self.core.clone();
        Box::pin(async move {
            // The client is alive while one of its calls runs; a layer that kept the service
            // beyond it gets an error, not a panic.
            let inner = core
                .upgrade()
                .ok_or_else(|| Error::request("the client was dropped"))?;
            let observation = request.observation.clone();
            let optional = request.optional;
            call::send_call::<Response>(&inner, request.into_template(), optional, &observation)
                .await
        })
    }
}

impl fmt::Debug for CallService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CallService")
    }
}

/// The layered call a built client holds.
pub(crate) type AroundService = BoxCloneSyncService<CallRequest, Response, Error>;

/// One layer, erased: wraps the service built so far.
/// Shared, so a live client rebuilt on new properties layers its call again.
pub(crate) type Wrap = Arc<dyn Fn(AroundService) -> AroundService + Send + Sync>;

/// Erases `layer` into a [`Wrap`].
pub(crate) fn wrap<L>(layer: L) -> Wrap
where
    L: Layer<AroundService> + Send + Sync + 'static,
    L::Service:
        Service<CallRequest, Response = Response, Error = Error> + Clone + Send + Sync + 'static,
    <L::Service as Service<CallRequest>>::Future: Send + 'static,
{
    Arc::new(move |service| BoxCloneSyncService::new(layer.layer(service)))
}

/// The call service of `core` under `wraps`, the first added outermost; `None` without layers.
pub(crate) fn build(core: &Weak<CoreInner>, wraps: &[Wrap]) -> Option<AroundService> {
    if wraps.is_empty() {
        return None;
    }
    let mut service = BoxCloneSyncService::new(CallService { core: core.clone() });
    for wrap in wraps.iter().rev() {
        service = wrap(service);
    }
    Some(service)
}

/// [`run`](super::call::run) for a client with layers around the call: they get the intercepted request and
/// answer a [`Response`] read whole, so a streaming method's body is read within the cap.
pub(super) async fn run_around(
    inner: &CoreInner,
    service: AroundService,
    args: RequestArgs,
    optional: bool,
    observation: Arc<CallObservation>,
) -> Result<Option<Response>, Error> {
    let template = call::intercepted(inner, args).await?;
    let key = template.meta.key;
    let request = CallRequest::new(template, optional, observation);
    let result = service
        .oneshot(request)
        .await
        .map_err(|e| e.with_method_key(key));
    call::answer(inner, result, optional, key)
}
