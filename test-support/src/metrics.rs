//! Reading back what the `metrics` facade recorded.
//!
//! A [`MetricsCapture`] installs a `DebuggingRecorder` for the current thread only, so that
//! tests running side by side in one binary never see each other's metrics. Calls made on a
//! current-thread runtime (`#[tokio::test]`'s default) record into it; work on other threads
//! does not.
//!
//! Breaker, bulkhead and balancer metrics belong to the client or balancer that records them, so
//! a capture sees those of the clients the test builds. feign-core's call metrics are made once
//! per client method, on its first call in the process, under the recorder current then: a test
//! of those installs the process's recorder before any call, in a binary of its own.

use std::collections::BTreeMap;

use metrics::LocalRecorderGuard;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

/// A metrics recorder installed for the current thread until dropped.
pub struct MetricsCapture {
    snapshotter: Snapshotter,
    _guard: LocalRecorderGuard<'static>,
}

impl MetricsCapture {
    /// Installs a fresh recorder as this thread's default.
    ///
    /// The recorder is leaked (a few bytes per test) so that the capture owns its guard.
    pub fn install() -> MetricsCapture {
        let recorder: &'static DebuggingRecorder = Box::leak(Box::new(DebuggingRecorder::new()));
        MetricsCapture {
            snapshotter: recorder.snapshotter(),
            _guard: metrics::set_default_local_recorder(recorder),
        }
    }

    /// What was recorded since the last snapshot. Taking a snapshot resets counters and
    /// empties histograms, so a check reads once.
    pub fn snapshot(&self) -> MetricsSnapshot {
        MetricsSnapshot::take(&self.snapshotter)
    }
}

impl std::fmt::Debug for MetricsCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsCapture").finish_non_exhaustive()
    }
}

/// One recorded series: its name, its labels, its value.
#[derive(Debug, PartialEq)]
pub struct Series {
    /// The metric's name.
    pub name: String,
    /// Its labels, by name.
    pub labels: BTreeMap<String, String>,
    /// Its value: a counter, a gauge or the histogram's samples.
    pub value: DebugValue,
}

impl Series {
    /// Whether this is a series of metric `name` whose label `label` is `value`.
    pub fn is(&self, name: &str, label: &str, value: &str) -> bool {
        self.name == name && self.labels.get(label).map(String::as_str) == Some(value)
    }
}

/// The series recorded up to one moment.
#[derive(Debug)]
pub struct MetricsSnapshot(Vec<Series>);

impl MetricsSnapshot {
    fn take(snapshotter: &Snapshotter) -> MetricsSnapshot {
        MetricsSnapshot(
            snapshotter
                .snapshot()
                .into_vec()
                .into_iter()
                .map(|(key, _, _, value)| {
                    let key = key.key();
                    Series {
                        name: key.name().to_owned(),
                        labels: key
                            .labels()
                            .map(|l| (l.key().to_owned(), l.value().to_owned()))
                            .collect(),
                        value,
                    }
                })
                .collect(),
        )
    }

    /// Every series, in no particular order.
    pub fn into_series(self) -> Vec<Series> {
        self.0
    }

    /// The series of metric `name` whose label `label` is `value`.
    pub fn matching(&self, name: &str, label: &str, value: &str) -> Vec<&Series> {
        self.0.iter().filter(|s| s.is(name, label, value)).collect()
    }

    /// The value of metric `name` with exactly `labels`, as a number: a counter's count, a
    /// gauge's value, or a histogram's number of samples.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let wanted: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.0
            .iter()
            .find(|s| s.name == name && s.labels == wanted)
            .map(|s| match &s.value {
                DebugValue::Counter(n) => *n as f64,
                DebugValue::Gauge(g) => g.into_inner(),
                DebugValue::Histogram(h) => h.len() as f64,
            })
    }
}
