//! A `metrics` recorder that keeps every series in memory, in the place a Prometheus or StatsD
//! exporter would be installed.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};

/// One series: its name and labels.
pub type SeriesKey = (String, BTreeMap<String, String>);

/// What a series holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A counter's total.
    Counter(u64),
    /// A gauge's last value.
    Gauge(f64),
    /// Every recorded sample of a histogram.
    Histogram(Vec<f64>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Counter(n) => write!(f, "counter {n}"),
            Value::Gauge(v) => write!(f, "gauge {v}"),
            Value::Histogram(samples) => {
                let sum: f64 = samples.iter().sum();
                write!(f, "histogram count={} sum={sum:.6}s", samples.len())
            }
        }
    }
}

#[derive(Default)]
struct Cell {
    counter: AtomicU64,
    gauge_bits: AtomicU64,
    samples: Mutex<Vec<f64>>,
}

impl CounterFn for Cell {
    fn increment(&self, value: u64) {
        self.counter.fetch_add(value, Ordering::Relaxed);
    }

    fn absolute(&self, value: u64) {
        self.counter.fetch_max(value, Ordering::Relaxed);
    }
}

impl GaugeFn for Cell {
    fn increment(&self, value: f64) {
        self.update(|v| v + value);
    }

    fn decrement(&self, value: f64) {
        self.update(|v| v - value);
    }

    fn set(&self, value: f64) {
        self.gauge_bits.store(value.to_bits(), Ordering::Relaxed);
    }
}

impl Cell {
    fn update(&self, f: impl Fn(f64) -> f64) {
        let _ = self
            .gauge_bits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some(f(f64::from_bits(bits)).to_bits())
            });
    }
}

impl HistogramFn for Cell {
    fn record(&self, value: f64) {
        self.samples
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(value);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// A registered series: its key, its kind and where its value is kept.
type Registered = (SeriesKey, Kind, Arc<Cell>);

/// Keeps every registered series; cloning shares them.
#[derive(Clone, Default)]
pub struct MemoryRecorder {
    series: Arc<Mutex<Vec<Registered>>>,
}

impl MemoryRecorder {
    fn cell(&self, key: &Key, kind: Kind) -> Arc<Cell> {
        let name = key.name().to_owned();
        let labels: BTreeMap<String, String> = key
            .labels()
            .map(|l| (l.key().to_owned(), l.value().to_owned()))
            .collect();
        let mut series = self.series.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, cell)) = series
            .iter()
            .find(|((n, l), k, _)| *n == name && *l == labels && *k == kind)
        {
            return cell.clone();
        }
        let cell = Arc::new(Cell::default());
        series.push(((name, labels), kind, cell.clone()));
        cell
    }

    /// Every series and its value, sorted by name then labels.
    pub fn snapshot(&self) -> Vec<(SeriesKey, Value)> {
        let series = self.series.lock().unwrap_or_else(|e| e.into_inner());
        let mut values: Vec<(SeriesKey, Value)> = series
            .iter()
            .map(|(key, kind, cell)| {
                let value = match kind {
                    Kind::Counter => Value::Counter(cell.counter.load(Ordering::Relaxed)),
                    Kind::Gauge => {
                        Value::Gauge(f64::from_bits(cell.gauge_bits.load(Ordering::Relaxed)))
                    }
                    Kind::Histogram => Value::Histogram(
                        cell.samples
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .clone(),
                    ),
                };
                (key.clone(), value)
            })
            .collect();
        values.sort_by(|a, b| a.0.cmp(&b.0));
        values
    }
}

impl Recorder for MemoryRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(self.cell(key, Kind::Counter))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(self.cell(key, Kind::Gauge))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(self.cell(key, Kind::Histogram))
    }
}
