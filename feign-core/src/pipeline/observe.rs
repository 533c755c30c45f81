//! Observing a call: one outcome per attempt for the balancer, and a span and metrics per call.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::OnceLock;

use http::{HeaderMap, StatusCode};
use tokio::time::Instant;
use tracing::Span;

use super::headers::static_headers;
use super::metrics::{Ending, MethodMetrics};
use super::receive::Receive;
use super::span::{self, RouteCallsite};
use crate::cow_map::{CopyOnWriteMap, QuickHash};
use crate::meta::{ClientMeta, MethodMeta};
use crate::resolve::{AttemptOutcome, Chosen};
use crate::Error;

/// Reports how an attempt ended to its chosen instance's observer, exactly once: through
/// [`AttemptGuard::finish`], or as `Discarded` when dropped unfinished. The clock is read only
/// when there is an instance to report to.
pub(crate) struct AttemptGuard {
    chosen: Option<(Chosen, Instant)>,
}

impl AttemptGuard {
    pub(crate) fn new(chosen: Option<Chosen>) -> Self {
        AttemptGuard {
            chosen: chosen.map(|chosen| (chosen, Instant::now())),
        }
    }

    pub(crate) fn finish(mut self, outcome: &AttemptOutcome<'_>) {
        self.report(outcome);
    }

    fn report(&mut self, outcome: &AttemptOutcome<'_>) {
        if let Some((chosen, started)) = self.chosen.take() {
            // One reading for both the attempt's length and the observer's timestamps.
            let ended = Instant::now();
            chosen.complete_at(outcome, ended.saturating_duration_since(started), ended);
        }
    }
}

impl Drop for AttemptGuard {
    fn drop(&mut self) {
        self.report(&AttemptOutcome::Discarded);
    }
}

/// What is kept per client method, made on its first call: its static headers, parsed once,
/// and what its spans and metrics need.
pub(crate) struct MethodState {
    /// The method's `#[headers]`, or `None` when one is invalid: each call then parses them
    /// again and fails with the error.
    pub(crate) static_headers: Option<HeaderMap>,
    /// The route without its query, e.g. `GET /orders/{id}`: the span name.
    route: &'static str,
    /// The route's path template, e.g. `/orders/{id}`: `url.template`.
    template: &'static str,
    callsite: OnceLock<&'static RouteCallsite>,
    metrics: MethodMetrics,
}

type MethodKey = (usize, usize);

/// Telemetry per (client, method) metadata pair; both are `static`s, so the map stays small.
static METHODS: OnceLock<CopyOnWriteMap<MethodKey, &'static MethodState, QuickHash>> =
    OnceLock::new();

/// The state of `meta` in `client`, made on first use.
pub(crate) fn method_state(
    client: &'static ClientMeta,
    meta: &'static MethodMeta,
) -> &'static MethodState {
    let key = (
        std::ptr::from_ref(client) as usize,
        std::ptr::from_ref(meta) as usize,
    );
    METHODS.get_or_init(CopyOnWriteMap::new).with(
        key,
        || {
            // A literal query in the template is static, but it stays out of names and labels.
            let route = meta.route.split('?').next().unwrap_or(meta.route);
            let template = route.split_once(' ').map_or(route, |(_, path)| path);
            Box::leak(Box::new(MethodState {
                static_headers: static_headers(meta).ok(),
                route,
                template,
                callsite: OnceLock::new(),
                metrics: MethodMetrics::new(client, meta, template),
            }))
        },
        |telemetry| *telemetry,
    )
}

/// One call's span and metrics: opened before the interceptors run, finished with its result.
pub(crate) struct CallObservation {
    telemetry: &'static MethodState,
    method: &'static str,
    span: Span,
    started: Instant,
    /// The status of the last attempt that got a response; 0 when the last one got none.
    last_status: AtomicU16,
}

impl CallObservation {
    pub(crate) fn start(
        client: &'static ClientMeta,
        meta: &'static MethodMeta,
        telemetry: &'static MethodState,
    ) -> Self {
        let method = meta.method.as_str();
        let span = if span::maybe_enabled() {
            telemetry
                .callsite
                .get_or_init(|| RouteCallsite::register(telemetry.route))
                .span(client, meta, method, telemetry.template)
        } else {
            Span::none()
        };
        CallObservation {
            telemetry,
            method,
            span,
            started: Instant::now(),
            last_status: AtomicU16::new(0),
        }
    }

    /// The call's span: a disabled one when no subscriber is interested.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// An attempt is about to be sent to `uri`, on `instance` when a resolver chose one.
    pub(crate) fn on_attempt(&self, attempt: u32, instance: Option<&str>, uri: &http::Uri) {
        if self.span.is_disabled() {
            return;
        }
        if let Some(host) = uri.host() {
            self.span.record("server.address", host);
        }
        let port = uri.port_u16().or(match uri.scheme_str() {
            Some("https") => Some(443),
            Some("http") => Some(80),
            _ => None,
        });
        if let Some(port) = port {
            self.span.record("server.port", port);
        }
        if let Some(instance) = instance {
            self.span.record("feign.instance.id", instance);
        }
        if attempt > 1 {
            self.span.record("http.request.resend_count", attempt - 1);
        }
    }

    /// An attempt got a response with `status`.
    pub(crate) fn on_response(&self, status: StatusCode) {
        self.last_status.store(status.as_u16(), Ordering::Relaxed);
    }

    /// The retry policy allowed another attempt: what the last one got no longer describes the
    /// call.
    pub(crate) fn on_retry(&self) {
        self.last_status.store(0, Ordering::Relaxed);
        self.telemetry.metrics.record_retry();
    }

    /// The call ended with `result`: records the status or error on the span and the duration.
    pub(crate) fn finish<R: Receive>(&self, result: &Result<Option<R>, Error>) {
        let (status, error_kind) = match result {
            Ok(Some(response)) => (response.status().as_u16(), None),
            Ok(None) => (StatusCode::NOT_FOUND.as_u16(), None),
            Err(error) => match error.status().map(|s| s.as_u16()) {
                Some(status) => (status, None),
                None => match self.last_status.load(Ordering::Relaxed) {
                    0 => (0, Some(error.kind_label())),
                    status => (status, None),
                },
            },
        };
        if !self.span.is_disabled() {
            if status != 0 {
                self.span.record("http.response.status_code", status);
            }
            if let Some(kind) = error_kind {
                self.span.record("error.type", kind);
            } else if status >= 400 {
                self.span.record("error.type", status);
            }
            if error_kind.is_some() || status >= 400 {
                self.span.record("otel.status_code", "ERROR");
            }
        }
        let ending = Ending {
            method: self.method,
            status,
            error_kind,
        };
        self.telemetry
            .metrics
            .record_duration(ending, self.started.elapsed());
    }
}
