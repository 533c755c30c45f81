//! One call: interceptors once, then attempts until success or the retry policy stops.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use futures_util::stream::{FuturesUnordered, StreamExt};

use http::header::AUTHORIZATION;
use http::{HeaderName, HeaderValue, StatusCode};
use tokio::time::Instant;

use super::args::RequestArgs;
use super::body::{self, OverLimit};
use super::headers::check_headers;
use super::observe::{AttemptGuard, CallObservation};
use super::receive::Receive;
use super::upload;
use super::{CoreInner, Target};
use crate::body::RequestBody;
use crate::client::SendOptions;
use crate::hedging::Hedging;
use crate::interceptor::{RequestTemplate, ResponseContext};
use crate::options::Options;
use crate::resolve::{AttemptOutcome, ChooseRequest};
use crate::retry::{RetryContext, RetryDecision};
use crate::{log, CallInfo, Error, Response};

/// A request carrying this header may be retried whatever its method.
const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// Runs a call; `Ok(None)` is a 404 when `optional`. `observation` hears of its attempts.
/// `R` says whether a 2xx body is read whole or left streaming.
pub(super) async fn run<R: Receive>(
    inner: &CoreInner,
    args: RequestArgs,
    optional: bool,
    observation: &CallObservation,
) -> Result<Option<R>, Error> {
    let template = intercepted(inner, args).await?;
    let key = template.meta.key;
    // Not boxed: a box here is one more allocation on every call, and costs more than it
    // saves now that a guarded call holds this future once (see `Resilience::guard`).
    let result = send_call::<R>(inner, template, optional, observation).await;
    answer(inner, result, optional, key)
}

/// The arguments expanded into a request, and the request interceptors run over it.
pub(super) async fn intercepted(
    inner: &CoreInner,
    args: RequestArgs,
) -> Result<RequestTemplate, Error> {
    let meta = args.meta;
    let mut template = args
        .into_template(&inner.prefix, inner.client_meta.service)
        .map_err(|e| e.with_method_key(meta.key))?;
    for interceptor in &inner.interceptors {
        interceptor
            .intercept(&mut template)
            .await
            .map_err(|e| e.with_method_key(meta.key))?;
    }
    Ok(template)
}

/// What the call returns for a response: `None` for a 404 an `Option` method takes as an
/// answer. A layer may answer any status itself; one the pipeline would not have returned
/// goes to the error decoder here.
pub(super) fn answer<R: Receive>(
    inner: &CoreInner,
    result: Result<R, Error>,
    optional: bool,
    key: &'static str,
) -> Result<Option<R>, Error> {
    let response = result?;
    let status = response.status();
    if status.is_success() {
        Ok(Some(response))
    } else if status == StatusCode::NOT_FOUND && optional {
        Ok(None)
    } else if status == StatusCode::NOT_FOUND && inner.dismiss_404 {
        Ok(Some(response))
    } else {
        match response.into_whole() {
            Ok(response) => Err(inner
                .error_decoder
                .decode(key, response)
                .with_method_key(key)),
            Err(streaming) => Ok(Some(streaming)),
        }
    }
}

/// The call from the checked request on: headers and limits checked, the body compressed,
/// every attempt within the total timeout. Returns a 2xx, or a 404 the method takes as an
/// answer; any other status is the error decoder's error.
pub(super) async fn send_call<R: Receive>(
    inner: &CoreInner,
    mut template: RequestTemplate,
    optional: bool,
    observation: &CallObservation,
) -> Result<R, Error> {
    let meta = template.meta;
    let checked = check_headers(&template.headers)
        .and_then(|()| check_limits(inner, &template))
        .and_then(|()| prepare_body(inner, &mut template));
    checked.map_err(|e| e.with_method_key(meta.key))?;
    let options = inner.options.with_method(&meta.options);
    let call = Call {
        inner,
        template: &template,
        options,
        optional,
        observation,
    };
    match options.get_total_timeout() {
        None => call.attempts(None).await,
        Some(total) => {
            let deadline = Instant::now() + total;
            match tokio::time::timeout_at(deadline, call.attempts(Some(deadline))).await {
                Ok(result) => result,
                Err(_) => Err(Error::timeout(format!(
                    "call exceeded its total timeout of {total:?}"
                ))
                .with_method_key(meta.key)),
            }
        }
    }
}

/// Compression, once per call: a buffered body gzipped when the settings call for it (a
/// streamed one goes as it is), and gzip asked for in responses.
fn prepare_body(inner: &CoreInner, template: &mut RequestTemplate) -> Result<(), Error> {
    if let Some(settings) = inner
        .compression
        .request
        .as_ref()
        .filter(|_| template.stream.is_none())
    {
        settings.apply(&mut template.headers, &mut template.body)?;
    }
    if inner.compression.response {
        crate::compression::accept_gzip(&mut template.headers);
    }
    Ok(())
}

fn check_limits(inner: &CoreInner, template: &RequestTemplate) -> Result<(), Error> {
    let limits = inner.limits;
    if template.path_and_query.len() > limits.request_target {
        return Err(Error::request(format!(
            "request target of {} bytes is over the {}-byte limit",
            template.path_and_query.len(),
            limits.request_target
        )));
    }
    let header_bytes: usize = template
        .headers
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len() + 4)
        .sum();
    if header_bytes > limits.header_bytes {
        return Err(Error::request(format!(
            "headers of {header_bytes} bytes are over the {}-byte limit",
            limits.header_bytes
        )));
    }
    Ok(())
}

struct Call<'a> {
    inner: &'a CoreInner,
    template: &'a RequestTemplate,
    options: Options,
    optional: bool,
    observation: &'a CallObservation,
}

impl Call<'_> {
    /// What each attempt of the call shares. Idempotent by method or `#[idempotent]`, or made
    /// so by an `Idempotency-Key` header.
    fn info(&self) -> CallInfo<'_> {
        let (template, meta) = (self.template, self.template.meta);
        let call = CallInfo::new(self.inner.client_meta.service, meta.key, &template.method);
        let by_method = if template.method == meta.method.as_http() {
            meta.idempotent
        } else {
            call.idempotent
        };
        call.with_idempotent(by_method || template.headers.contains_key(IDEMPOTENCY_KEY))
    }

    async fn attempts<R: Receive>(&self, deadline: Option<Instant>) -> Result<R, Error> {
        let inner = self.inner;
        let key = self.template.meta.key;
        let call = self.info();
        inner.retry.on_call();
        let start = Instant::now();
        let mut tried = Tried::default();
        let mut same_instance: Option<Arc<str>> = None;
        let mut attempt = 1u32;
        loop {
            let (result, url) = match &inner.hedging {
                // Boxed: only hedged calls carry the state of several attempts at once.
                Some(hedging) if attempt == 1 && self.hedgeable(call) => {
                    let (result, url, made) =
                        Box::pin(self.hedged::<R>(call, hedging, &mut tried)).await;
                    attempt = made;
                    (result, url)
                }
                _ => {
                    self.attempt::<R>(call, attempt, &mut tried, same_instance.take())
                        .await
                }
            };
            let result = match result {
                // Boxed: calls without response interceptors do not carry its state. A body
                // left streaming is not in memory for them to see.
                Ok(response) if !inner.response_interceptors.is_empty() => {
                    match response.into_whole() {
                        Ok(whole) => Box::pin(self.intercept_response(whole, attempt))
                            .await
                            .map(R::whole),
                        Err(streaming) => Ok(streaming),
                    }
                }
                other => other,
            };
            let error = match result {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response)
                    if response.status() == StatusCode::NOT_FOUND
                        && (self.optional || inner.dismiss_404) =>
                {
                    return Ok(response)
                }
                // A non-2xx is always read whole; were one streaming, it goes back as is.
                Ok(response) => match response.into_whole() {
                    Ok(response) => inner.error_decoder.decode(key, response),
                    Err(streaming) => return Ok(streaming),
                },
                Err(error) => error,
            };
            let mut error = error.with_method_key(key);
            if let Some(url) = &url {
                error = error.with_url(&url.to_string());
            }
            let now = Instant::now();
            let ctx = RetryContext {
                call,
                attempt,
                error: &error,
                elapsed: now - start,
                remaining: deadline.map(|d| d.saturating_duration_since(now)),
            };
            // A streamed body that has started to go out cannot be sent again.
            let decision = if self.template.stream.as_ref().is_some_and(|s| s.started()) {
                RetryDecision::Stop
            } else {
                inner.retry.decide(&ctx)
            };
            match decision {
                RetryDecision::Retry {
                    delay,
                    same_instance: same,
                } if deadline.is_none_or(|d| now + delay < d) => {
                    log::retry(inner.log_level, key, attempt, delay);
                    self.observation.on_retry();
                    if same {
                        same_instance = tried.last().cloned();
                    }
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    attempt += 1;
                }
                RetryDecision::BudgetExhausted => return Err(error.with_retry_budget_exhausted()),
                _ => return Err(error),
            }
        }
    }

    /// The response interceptors, in order, over an attempt's response.
    async fn intercept_response(
        &self,
        mut response: Response,
        attempt: u32,
    ) -> Result<Response, Error> {
        let context = ResponseContext {
            request: self.template,
            attempt,
        };
        for interceptor in &self.inner.response_interceptors {
            response = interceptor.intercept(response, &context).await?;
        }
        Ok(response)
    }

    /// One attempt; returns the URL it went to when one was chosen.
    async fn attempt<R: Receive>(
        &self,
        call: CallInfo<'_>,
        attempt: u32,
        tried: &mut Tried,
        same_instance: Option<Arc<str>>,
    ) -> (Result<R, Error>, Option<http::Uri>) {
        match self.target(call, attempt, tried, same_instance) {
            Ok(target) => self.send_to::<R>(attempt, target).await,
            Err(e) => (Err(e), None),
        }
    }

    /// Where attempt `attempt` goes: the fixed URL, or an instance the resolver chose (added to
    /// `tried`).
    fn target(
        &self,
        call: CallInfo<'_>,
        attempt: u32,
        tried: &mut Tried,
        same_instance: Option<Arc<str>>,
    ) -> Result<AttemptTarget, Error> {
        let template = self.template;
        Ok(match &self.inner.target {
            Target::Fixed {
                base,
                authorization,
            } => AttemptTarget {
                url: join(base, &template.path_and_query),
                authorization: authorization.clone(),
                instance: None,
                guard: AttemptGuard::new(None),
            },
            Target::Resolver(resolver) => {
                let request = ChooseRequest {
                    call,
                    headers: &template.headers,
                    attempt,
                    tried: tried.as_slice(),
                    same_instance: same_instance.as_deref(),
                };
                let chosen = resolver.choose(&request)?;
                let instance = chosen.instance_id().clone();
                tried.push(instance.clone());
                let (base, authorization) = crate::redact::split_basic_auth(chosen.base_url());
                AttemptTarget {
                    url: join(&base, &template.path_and_query),
                    authorization,
                    instance: Some(instance),
                    guard: AttemptGuard::new(Some(chosen)),
                }
            }
        })
    }

    /// Sends attempt `attempt` to `target` and reports how it ended to the balancer (as
    /// discarded when the future is dropped first).
    async fn send_to<R: Receive>(
        &self,
        attempt: u32,
        target: AttemptTarget,
    ) -> (Result<R, Error>, Option<http::Uri>) {
        let AttemptTarget {
            url,
            authorization,
            instance,
            guard,
        } = target;
        // Parsing the owned string reuses its buffer; the URI is kept (a cheap clone) to name
        // the URL in errors.
        let (result, uri) = match http::Uri::try_from(url) {
            Ok(uri) => {
                self.observation
                    .on_attempt(attempt, instance.as_deref(), &uri);
                (self.send::<R>(uri.clone(), authorization).await, Some(uri))
            }
            Err(e) => (
                Err(Error::request("invalid request url").with_source(e)),
                None,
            ),
        };
        match &result {
            Ok(response) => {
                self.observation.on_response(response.status());
                guard.finish(&AttemptOutcome::Response(response.status()));
            }
            Err(error) => guard.finish(&AttemptOutcome::Failed(error)),
        }
        (result, uri)
    }

    /// Whether the call may be hedged: idempotent, balanced, and with a body that can go out
    /// twice at once.
    fn hedgeable(&self, call: CallInfo<'_>) -> bool {
        call.idempotent
            && self.template.stream.is_none()
            && matches!(self.inner.target, Target::Resolver(_))
    }

    /// The first attempt, and a hedge to an instance not yet tried each time the hedging delay
    /// passes with no answer, while the retry policy allows one. The first response wins and
    /// the attempts still out are dropped (the balancer hears of them as discarded); a failed
    /// attempt leaves the others running. Returns the number of attempts made.
    ///
    /// With a percentile delay, the first attempt's latency goes to the method's window when it
    /// answered with a 2xx, or, when another attempt answered first, the time until then (a
    /// lower bound of it).
    async fn hedged<R: Receive>(
        &self,
        call: CallInfo<'_>,
        hedging: &Hedging,
        tried: &mut Tried,
    ) -> (Result<R, Error>, Option<http::Uri>, u32) {
        let (delay, window) = hedging.delay_for(self.template.meta);
        let first = match self.target(call, 1, tried, None) {
            Ok(target) => target,
            Err(e) => return (Err(e), None, 1),
        };
        let started = Instant::now();
        let mut first_out = true;
        let mut running = FuturesUnordered::new();
        running.push(self.send_numbered::<R>(1, first));
        let mut made = 1u32;
        let mut hedges_left = hedging.config.max_hedges;
        let mut timer = Box::pin(tokio::time::sleep(delay));
        loop {
            let event = std::future::poll_fn(|cx| {
                if let Poll::Ready(done) = running.poll_next_unpin(cx) {
                    return Poll::Ready(done);
                }
                if hedges_left > 0 && timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                Poll::Pending
            })
            .await;
            match event {
                Some((attempt, Ok(response), uri)) => {
                    if let Some(window) = &window {
                        if first_out && (attempt > 1 || response.status().is_success()) {
                            window.record(started.elapsed());
                        }
                    }
                    return (Ok(response), uri, made);
                }
                Some((_, failed, uri)) if running.is_empty() => return (failed, uri, made),
                Some((attempt, _, _)) => first_out &= attempt != 1,
                None => {
                    hedges_left -= 1;
                    match self.hedge_target(call, made + 1, tried) {
                        Some(target) => {
                            made += 1;
                            log::hedge(self.inner.log_level, self.template.meta.key, made);
                            running.push(self.send_numbered::<R>(made, target));
                            timer.as_mut().reset(Instant::now() + delay);
                        }
                        None => hedges_left = 0,
                    }
                }
            }
        }
    }

    /// [`send_to`](Self::send_to), naming the attempt in its result.
    async fn send_numbered<R: Receive>(
        &self,
        attempt: u32,
        target: AttemptTarget,
    ) -> (u32, Result<R, Error>, Option<http::Uri>) {
        let (result, uri) = self.send_to::<R>(attempt, target).await;
        (attempt, result, uri)
    }

    /// Where a hedge goes: an instance not yet tried, when the retry policy pays for it.
    fn hedge_target(
        &self,
        call: CallInfo<'_>,
        attempt: u32,
        tried: &mut Tried,
    ) -> Option<AttemptTarget> {
        if !self.inner.retry.allow_hedge(&call) {
            return None;
        }
        let before = tried.as_slice().len();
        let target = self.target(call, attempt, tried, None).ok()?;
        let fresh = target
            .instance
            .as_ref()
            .is_some_and(|id| !tried.as_slice()[..before].contains(id));
        // A resolver with no other instance may give back one already tried: not hedged there
        // (dropping the target reports the pick as discarded).
        fresh.then_some(target)
    }

    /// Sends one attempt; a 2xx body is read whole or left streaming as `R` wants, any other
    /// is read whole (within the cap, of which the ErrorDecoder sees a preview).
    async fn send<R: Receive>(
        &self,
        uri: http::Uri,
        authorization: Option<HeaderValue>,
    ) -> Result<R, Error> {
        let inner = self.inner;
        let template = self.template;
        let key = template.meta.key;
        let body = match &template.stream {
            None => RequestBody::from(template.body.clone()),
            Some(stream) => stream.next_attempt().ok_or_else(|| {
                Error::new(
                    crate::error::Kind::Transport,
                    "the streamed request body was read by an earlier attempt; it is not sent again",
                )
            })?,
        };
        let mut request = http::Request::new(body);
        *request.method_mut() = template.method.clone();
        *request.uri_mut() = uri;
        *request.headers_mut() = template.headers.clone();
        if let Some(value) = authorization {
            request.headers_mut().entry(AUTHORIZATION).or_insert(value);
        }
        log::request(
            inner.log_level,
            key,
            &template.method,
            request.uri(),
            request.headers(),
            &template.body,
            template.stream.as_ref().map(|stream| stream.length()),
        );
        let started = Instant::now();
        let send_options = SendOptions {
            connect_timeout: self.options.get_connect_timeout(),
            follow_redirects: self.options.get_follow_redirects(),
        };
        let read_timeout = self.options.get_read_timeout();
        let sending = inner.client.send(request, &send_options);
        let sent = match template.stream.as_deref() {
            None => tokio::time::timeout(read_timeout, sending).await,
            // Boxed: a streamed call is rare, and the common call's future stays small.
            Some(stream) => {
                Box::pin(upload::within_read_timeout(sending, stream, read_timeout)).await
            }
        };
        let response = match sent {
            Ok(Ok(response)) => response,
            Ok(Err(error)) => {
                let error = match template.stream.as_deref() {
                    Some(stream) => upload::explain(stream, error),
                    None => error,
                };
                return Err(self.failed(error, started));
            }
            Err(_) => {
                return Err(self.failed(
                    Error::timeout(format!("no response within {read_timeout:?}")),
                    started,
                ))
            }
        };
        if let Some(error) = template.stream.as_deref().and_then(upload::failed) {
            return Err(self.failed(error, started));
        }
        let (parts, response_body) = response.into_parts();
        let (parts, response_body) = if parts.status.is_success() {
            match R::stream(parts, response_body, read_timeout, key) {
                Ok(streaming) => {
                    log::response_head(
                        inner.log_level,
                        key,
                        streaming.status(),
                        started.elapsed(),
                        streaming.headers(),
                    );
                    return Ok(streaming);
                }
                Err(whole) => whole,
            }
        } else {
            (parts, response_body)
        };
        let over_limit = if parts.status.is_success() {
            OverLimit::Fail
        } else {
            OverLimit::Truncate
        };
        let body = body::read(
            response_body,
            &parts.headers,
            inner.limits.response_bytes,
            over_limit,
            read_timeout,
        )
        .await
        .map_err(|e| self.failed(e, started))?;
        let mut headers = parts.headers;
        let body = if inner.compression.response {
            crate::compression::gunzip_response(
                &mut headers,
                body,
                inner.limits.response_bytes,
                over_limit == OverLimit::Truncate,
            )
            .map_err(|e| self.failed(e, started))?
        } else {
            body
        };
        log::response(
            inner.log_level,
            key,
            parts.status,
            started.elapsed(),
            &headers,
            &body,
        );
        Ok(R::whole(Response::new(parts.status, headers, body)))
    }

    fn failed(&self, error: Error, started: Instant) -> Error {
        log::failure(
            self.inner.log_level,
            self.template.meta.key,
            &error,
            started.elapsed(),
        );
        error
    }
}

/// Where one attempt goes, and the guard that reports how it ended.
struct AttemptTarget {
    url: String,
    authorization: Option<HeaderValue>,
    /// The instance a resolver chose; `None` for a fixed URL.
    instance: Option<Arc<str>>,
    guard: AttemptGuard,
}

/// The instances a call's attempts went to, in order. Most calls make one attempt, so the
/// first is kept inline and only a retry allocates.
#[derive(Default)]
enum Tried {
    #[default]
    None,
    One(Arc<str>),
    Many(Vec<Arc<str>>),
}

impl Tried {
    fn as_slice(&self) -> &[Arc<str>] {
        match self {
            Tried::None => &[],
            Tried::One(only) => std::slice::from_ref(only),
            Tried::Many(all) => all,
        }
    }

    fn last(&self) -> Option<&Arc<str>> {
        self.as_slice().last()
    }

    fn push(&mut self, instance: Arc<str>) {
        *self = match std::mem::take(self) {
            Tried::None => Tried::One(instance),
            Tried::One(first) => Tried::Many(vec![first, instance]),
            Tried::Many(mut all) => {
                all.push(instance);
                Tried::Many(all)
            }
        };
    }
}

/// `base` without its trailing slash, then the path and query.
fn join(base: &str, path_and_query: &str) -> String {
    let base = base.trim_end_matches('/');
    let mut url = String::with_capacity(base.len() + path_and_query.len());
    url.push_str(base);
    url.push_str(path_and_query);
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tried_instances_keep_their_order_through_the_inline_first() {
        let mut tried = Tried::default();
        assert!(tried.as_slice().is_empty() && tried.last().is_none());
        for (count, id) in ["a", "b", "c"].into_iter().enumerate() {
            tried.push(Arc::from(id));
            assert_eq!(tried.as_slice().len(), count + 1);
            assert_eq!(tried.last().map(|last| &**last), Some(id));
        }
        let ids: Vec<&str> = tried.as_slice().iter().map(|id| &**id).collect();
        assert_eq!(ids, ["a", "b", "c"]);
    }
}
