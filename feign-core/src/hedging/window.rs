//! A method's recent latencies and the percentile of them a hedge waits for.
//!
//! A ring buffer of the last [`CAPACITY`] latencies under a mutex: recording is a push; the
//! percentile is recomputed (a copy and a selection, a few microseconds) every
//! [`RECOMPUTE_EVERY`] samples and kept in an atomic, so reading the delay takes no lock.
//! Old samples age out as new ones come.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// The latencies kept: the percentile is of the last this many.
const CAPACITY: usize = 1000;
/// Samples seen before the percentile is used.
pub(super) const WARM_UP: usize = 100;
/// Samples between two computations of the percentile.
const RECOMPUTE_EVERY: usize = 10;

/// The recent first-attempt latencies of one client method.
pub(crate) struct LatencyWindow {
    quantile: f64,
    /// The current percentile in microseconds; 0 before warm-up.
    current: AtomicU64,
    samples: Mutex<Samples>,
}

#[derive(Default)]
struct Samples {
    /// Microseconds, at most [`CAPACITY`]; once full, `next` is overwritten.
    ring: Vec<u64>,
    next: usize,
    seen: usize,
}

impl LatencyWindow {
    pub(crate) fn new(quantile: f64) -> Self {
        LatencyWindow {
            quantile,
            current: AtomicU64::new(0),
            samples: Mutex::new(Samples::default()),
        }
    }

    /// The delay before a hedge: the percentile, at least `floor`; `fallback` before warm-up.
    pub(crate) fn delay(&self, fallback: Duration, floor: Duration) -> Duration {
        match self.current.load(Ordering::Relaxed) {
            0 => fallback,
            micros => Duration::from_micros(micros).max(floor),
        }
    }

    /// Adds a latency; recomputes the percentile every [`RECOMPUTE_EVERY`] samples after
    /// warm-up (outside the lock).
    pub(crate) fn record(&self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        let snapshot = {
            let mut samples = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
            if samples.ring.len() < CAPACITY {
                samples.ring.push(micros);
            } else {
                let next = samples.next;
                samples.ring[next] = micros;
            }
            samples.next = (samples.next + 1) % CAPACITY;
            samples.seen += 1;
            let due = samples.seen >= WARM_UP && (samples.seen - WARM_UP) % RECOMPUTE_EVERY == 0;
            due.then(|| samples.ring.clone())
        };
        if let Some(mut latencies) = snapshot {
            self.current
                .store(quantile(&mut latencies, self.quantile), Ordering::Relaxed);
        }
    }
}

/// The `q` quantile of `values` (nearest rank; `values` is reordered, not empty).
fn quantile(values: &mut [u64], q: f64) -> u64 {
    let rank = ((values.len() as f64 * q).ceil() as usize).clamp(1, values.len());
    *values.select_nth_unstable(rank - 1).1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(window: &LatencyWindow, millis: impl IntoIterator<Item = u64>) {
        for ms in millis {
            window.record(Duration::from_millis(ms));
        }
    }

    #[test]
    fn the_fallback_is_used_until_warm_up_then_the_percentile() {
        let window = LatencyWindow::new(0.9);
        let (fallback, floor) = (Duration::from_secs(1), Duration::from_millis(1));
        recorded(&window, (0..WARM_UP as u64 - 1).map(|i| i % 10 + 1));
        assert_eq!(window.delay(fallback, floor), fallback);
        // 1..=10 ms, ten times each: p90 is 9 ms.
        recorded(&window, [10]);
        assert_eq!(window.delay(fallback, floor), Duration::from_millis(9));
        assert_eq!(
            window.delay(fallback, Duration::from_millis(50)),
            Duration::from_millis(50)
        );
    }

    #[test]
    fn old_samples_age_out() {
        let window = LatencyWindow::new(0.5);
        let (fallback, floor) = (Duration::from_secs(1), Duration::from_millis(1));
        recorded(&window, std::iter::repeat_n(100, CAPACITY));
        assert_eq!(window.delay(fallback, floor), Duration::from_millis(100));
        recorded(&window, std::iter::repeat_n(5, CAPACITY));
        assert_eq!(window.delay(fallback, floor), Duration::from_millis(5));
    }

    #[test]
    fn quantile_takes_the_nearest_rank() {
        assert_eq!(quantile(&mut [3, 1, 2], 0.5), 2);
        assert_eq!(quantile(&mut [3, 1, 2], 0.99), 3);
        assert_eq!(quantile(&mut [3, 1, 2], 0.01), 1);
    }
}
