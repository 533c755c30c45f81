//! Middleware around the whole call: `tower::Layer`s over the call from the expanded request
//! to the response, for rate limits, concurrency limits and caches.
//!
//! The layers wrap a service that owns nothing: each [`CallRequest`] carries the exchange it
//! runs on, so the layered service is built once per client, never points back into it, and
//! keeps its state when a live client's settings change.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt as _};

use super::exchange::{Exchange, Expect};
use super::observe::CallObservation;
use super::receive::Receive;
use super::retrying;
use crate::RequestTemplate;
use crate::{Error, Response, StreamingResponse};

/// The request a layer added with [`Builder::layer`](crate::Builder::layer) sees: the call's
/// request as the request interceptors left it (method, path and query relative to the
/// instance, headers, the buffered body, the method's key and route).
///
/// A layer may change it through [`template_mut`](CallRequest::template_mut); every header is
/// checked again before anything is sent.
pub struct CallRequest {
    template: RequestTemplate,
    exchange: Arc<Exchange>,
    expect: Expect,
    /// A 2xx body is left streaming: the method returns a `StreamingResponse`.
    streams: bool,
    observation: Arc<CallObservation>,
}

impl CallRequest {
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

    /// Whether the method streams its 2xx body: the [`Response`] the layers get back then
    /// carries only the head ([`Response::is_streaming`]).
    pub fn streams_response(&self) -> bool {
        self.streams
    }
}

impl fmt::Debug for CallRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallRequest")
            .field("template", &self.template)
            .field("streams", &self.streams)
            .finish_non_exhaustive()
    }
}

/// The innermost service under the layers: the rest of the call, on the exchange its request
/// carries (header checks, every attempt with its pick, transport, response interceptors and
/// error decoder, retries). Its response is the one the decoder will get: a 2xx, or a 404 the
/// method takes as an answer; any other status is already the error decoder's error.
#[derive(Clone, Copy)]
struct CallService;

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
        Box::pin(async move {
            let CallRequest {
                template,
                exchange,
                expect,
                streams,
                observation,
            } = request;
            if streams {
                retrying::run::<StreamingResponse>(&exchange, template, expect, &observation)
                    .await
                    .map(Receive::into_layered)
            } else {
                retrying::run::<Response>(&exchange, template, expect, &observation).await
            }
        })
    }
}

/// The layered call a built client holds.
pub(crate) type AroundService = BoxCloneSyncService<CallRequest, Response, Error>;

/// One layer, erased: wraps the service built so far.
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

/// The call service under `wraps`, the first added outermost; `None` without layers.
pub(crate) fn build(wraps: &[Wrap]) -> Option<AroundService> {
    if wraps.is_empty() {
        return None;
    }
    let mut service = BoxCloneSyncService::new(CallService);
    for wrap in wraps.iter().rev() {
        service = wrap(service);
    }
    Some(service)
}

/// The call of `template` through `layers` down to `exchange`; the layers' response is judged
/// by the same status rule as an attempt's (a layer may answer any status itself).
pub(super) async fn run<R: Receive>(
    layers: &AroundService,
    exchange: &Arc<Exchange>,
    template: RequestTemplate,
    expect: Expect,
    observation: Arc<CallObservation>,
) -> Result<R, Error> {
    let key = template.meta.key;
    let request = CallRequest {
        template,
        exchange: exchange.clone(),
        expect,
        streams: R::STREAMS,
        observation,
    };
    let response = layers
        .clone()
        .oneshot(request)
        .await
        .map_err(|e| e.with_method_key(key))?;
    R::from_layered(exchange.settle(response, expect, key)?)
}
