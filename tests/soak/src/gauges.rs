//! The metrics the report reads: the adaptive concurrency limit of each caller, as feign-core
//! publishes it through the `metrics` facade. Every other metric goes nowhere, so the recorder
//! holds a few atomics whatever the run's length.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use feign_core::resilience::ADAPTIVE_CONCURRENCY_LIMIT;
use metrics::{
    Counter, Gauge, GaugeFn, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
};

/// One adaptive limit's readings: the latest, the lowest and the highest, and how many times it
/// was set (each window the controller closed, and once at the start).
#[derive(Debug, Default)]
pub(crate) struct LimitGauge {
    last: AtomicU64,
    lowest: AtomicU64,
    highest: AtomicU64,
    sets: AtomicU64,
}

impl LimitGauge {
    /// `(lowest, highest, last, times set)`.
    pub(crate) fn readings(&self) -> (u64, u64, u64, u64) {
        (
            self.lowest.load(Ordering::Relaxed),
            self.highest.load(Ordering::Relaxed),
            self.last.load(Ordering::Relaxed),
            self.sets.load(Ordering::Relaxed),
        )
    }
}

impl GaugeFn for LimitGauge {
    fn increment(&self, _: f64) {}

    fn decrement(&self, _: f64) {}

    fn set(&self, value: f64) {
        // A limit is a whole number of calls.
        let value = value.max(0.0).round() as u64;
        self.last.store(value, Ordering::Relaxed);
        self.highest.fetch_max(value, Ordering::Relaxed);
        if self.sets.fetch_add(1, Ordering::Relaxed) == 0 {
            self.lowest.store(value, Ordering::Relaxed);
        } else {
            self.lowest.fetch_min(value, Ordering::Relaxed);
        }
    }
}

/// Each client's adaptive limit, by client name.
type Limits = Vec<(String, Arc<LimitGauge>)>;

/// The recorder: the adaptive limits by client name.
#[derive(Debug, Default, Clone)]
pub(crate) struct Gauges {
    limits: Arc<Mutex<Limits>>,
}

impl Gauges {
    /// Installs a recorder for this process; `None` when one is installed already.
    pub(crate) fn install() -> Option<Gauges> {
        let gauges = Gauges::default();
        metrics::set_global_recorder(gauges.clone()).ok()?;
        Some(gauges)
    }

    /// The adaptive limit of the client named `name`, once it has one.
    pub(crate) fn limit(&self, name: &str) -> Option<Arc<LimitGauge>> {
        self.limits
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(client, _)| client == name)
            .map(|(_, gauge)| gauge.clone())
    }
}

impl Recorder for Gauges {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        Counter::noop()
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        if key.name() != ADAPTIVE_CONCURRENCY_LIMIT {
            return Gauge::noop();
        }
        let name = key
            .labels()
            .find(|label| label.key() == "name")
            .map_or_else(String::new, |label| label.value().to_owned());
        let mut limits = self.limits.lock().unwrap_or_else(|e| e.into_inner());
        let gauge = match limits.iter().find(|(client, _)| *client == name) {
            Some((_, gauge)) => gauge.clone(),
            None => {
                let gauge = Arc::new(LimitGauge::default());
                limits.push((name, gauge.clone()));
                gauge
            }
        };
        Gauge::from_arc(gauge)
    }

    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}
