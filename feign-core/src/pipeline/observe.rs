//! Observing a call: its span and metrics, and what each attempt tells them.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::OnceLock;

use http::{HeaderMap, StatusCode};
use tokio::time::Instant;
use tracing::Span;

use super::metrics::{Ending, MethodMetrics};
use super::span::{self, RouteCallsite};
use crate::cow_map::{CopyOnWriteMap, QuickHash};
use crate::meta::{ClientMeta, MethodMeta};
use crate::Error;

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
                static_headers: crate::headers::static_headers(meta).ok(),
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
    /// An error with no status of its own (a decode error, a timeout) is recorded by its kind,
    /// beside the status of the response it came after, if any.
    pub(crate) fn finish(&self, result: Result<(), &Error>) {
        let last_status = self.last_status.load(Ordering::Relaxed);
        let (status, error_kind) = match result {
            Ok(()) => (last_status, None),
            Err(error) => match error.status() {
                Some(status) => (status.as_u16(), None),
                // A 4xx or 5xx names the failure itself; after a 2xx (a body that did not
                // decode) or no response at all, the error's kind does.
                None if last_status >= 400 => (last_status, None),
                None => (last_status, Some(error.kind_label())),
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
