//! Call metrics through the `metrics` facade, with label sets built once per client method.
//!
//! Handles are registered with the recorder the first time a label set is used and reused after
//! that, so install the recorder before the first call (as every `metrics` exporter asks).
//! Labels come from the method's static metadata and the response status only: never from
//! argument values, so the number of series is bounded by the templated routes.

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{Counter, Histogram, Label, Unit};

use crate::cow_map::CopyOnWriteMap;
use crate::meta::{ClientMeta, MethodMeta};

/// Duration of client calls in seconds, OpenTelemetry's name.
pub(crate) const REQUEST_DURATION: &str = "http.client.request.duration";
/// Retries of client calls.
pub(crate) const RETRIES: &str = "feign.client.retries";

/// How a call ended, as a metric sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Ending {
    /// The HTTP method sent, `_OTHER` for one outside RFC 9110's list.
    pub(super) method: &'static str,
    /// The final response status; 0 when none arrived.
    pub(super) status: u16,
    /// The error kind when the call failed without a status (`timeout`, `connect`...).
    pub(super) error_kind: Option<&'static str>,
}

/// One client method's metric handles.
pub(super) struct MethodMetrics {
    client: &'static ClientMeta,
    meta: &'static MethodMeta,
    template: &'static str,
    /// One histogram per way a call ended, read without a lock on every call.
    durations: CopyOnWriteMap<Ending, Histogram>,
    retries: OnceLock<Counter>,
}

impl MethodMetrics {
    pub(super) fn new(
        client: &'static ClientMeta,
        meta: &'static MethodMeta,
        template: &'static str,
    ) -> Self {
        MethodMetrics {
            client,
            meta,
            template,
            durations: CopyOnWriteMap::new(),
            retries: OnceLock::new(),
        }
    }

    /// Records the duration of a whole call (retries and their delays included).
    pub(super) fn record_duration(&self, ending: Ending, elapsed: Duration) {
        self.durations.with(
            ending,
            || self.register_duration(ending),
            |histogram| histogram.record(elapsed.as_secs_f64()),
        );
    }

    fn register_duration(&self, ending: Ending) -> Histogram {
        let mut labels = self.static_labels();
        labels.push(Label::from_static_parts(
            "http.request.method",
            ending.method,
        ));
        labels.push(Label::from_static_parts("url.template", self.template));
        labels.push(Label::from_static_parts("outcome", outcome(ending.status)));
        if ending.status != 0 {
            labels.push(Label::new(
                "http.response.status_code",
                ending.status.to_string(),
            ));
        }
        match (ending.error_kind, ending.status) {
            (Some(kind), _) => labels.push(Label::from_static_parts("error.type", kind)),
            (None, status) if status >= 400 => {
                labels.push(Label::new("error.type", status.to_string()));
            }
            _ => {}
        }
        metrics::describe_histogram!(
            REQUEST_DURATION,
            Unit::Seconds,
            "Duration of client calls, retries included"
        );
        metrics::histogram!(REQUEST_DURATION, labels)
    }

    /// Counts one retry of a call.
    pub(super) fn record_retry(&self) {
        self.retries
            .get_or_init(|| {
                metrics::describe_counter!(RETRIES, "Retries of client calls");
                metrics::counter!(RETRIES, self.static_labels())
            })
            .increment(1);
    }

    fn static_labels(&self) -> Vec<Label> {
        vec![
            Label::from_static_parts("client", self.client.service),
            Label::from_static_parts("method_key", self.meta.key),
        ]
    }
}

/// Spring's `Outcome` of a status: `SUCCESS`, `CLIENT_ERROR`... and `UNKNOWN` without one.
pub(super) fn outcome(status: u16) -> &'static str {
    match status {
        100..=199 => "INFORMATIONAL",
        200..=299 => "SUCCESS",
        300..=399 => "REDIRECTION",
        400..=499 => "CLIENT_ERROR",
        500..=599 => "SERVER_ERROR",
        _ => "UNKNOWN",
    }
}
