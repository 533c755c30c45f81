//! The adaptive concurrency limit: a bulkhead whose size follows measured latency.
//!
//! The call path only touches atomics: admission is an add to the in-flight count checked
//! against the current limit; a finished call adds its latency to the window's sum. The call
//! that finds the window over takes the controller's lock (a `try_lock`: anyone else skips) and
//! recomputes the limit, once per window, not per call.
//!
//! Admission is checked by the `adaptive` models of `tests/loom/`, which compile this file beside
//! loom's types (hence its unit tests in `adaptive_tests.rs`).

use std::sync::Arc;
use std::time::Duration;

use ::metrics::Gauge;
use tokio::time::Instant;

use super::adaptive_config::AdaptiveLimitConfig;
use crate::sync::Ordering::Relaxed;
use crate::sync::{AtomicU32, AtomicU64, Mutex};
use crate::Error;

/// Gauge, label `name`: the adaptive concurrency limit of the client now.
pub const ADAPTIVE_CONCURRENCY_LIMIT: &str = "feign.adaptive.concurrency.limit";

/// One client's adaptive limit.
pub(crate) struct AdaptiveLimit {
    name: Arc<str>,
    config: AdaptiveLimitConfig,
    /// What admission checks against; written only by the controller.
    limit: AtomicU32,
    in_flight: AtomicU32,
    /// The current window: latencies summed in nanoseconds, their count, the most calls in
    /// flight at once, and when it began (nanoseconds after `epoch`).
    rtt_sum: AtomicU64,
    samples: AtomicU32,
    peak: AtomicU32,
    window_start: AtomicU64,
    epoch: Instant,
    controller: Mutex<Controller>,
    gauge: Gauge,
}

/// The limit's state between windows.
struct Controller {
    /// The limit as a real number, so that small steps add up.
    estimate: f64,
    /// The lowest window latency seen since the last refresh, in nanoseconds; 0 before any.
    min_rtt: f64,
    next_refresh: Duration,
    probe: Probe,
}

/// The refresh of the unloaded latency: one window to let the calls admitted under the old
/// limit finish, one measured at `min_limit`; then the old limit comes back.
#[derive(Clone, Copy)]
enum Probe {
    Off,
    Draining(f64),
    Measuring(f64),
}

/// An admitted call; dropping it without [`Ticket::finish`] (a cancelled call) frees its place
/// without a latency sample.
pub(crate) struct Ticket<'a> {
    limit: &'a AdaptiveLimit,
    start: u64,
}

impl AdaptiveLimit {
    pub(crate) fn new(name: &str, config: AdaptiveLimitConfig) -> AdaptiveLimit {
        let gauge = ::metrics::gauge!(ADAPTIVE_CONCURRENCY_LIMIT, "name" => name.to_owned());
        // The first window measures the unloaded latency, as every refresh does.
        gauge.set(f64::from(config.min_limit));
        AdaptiveLimit {
            name: name.into(),
            config,
            limit: AtomicU32::new(config.min_limit),
            in_flight: AtomicU32::new(0),
            rtt_sum: AtomicU64::new(0),
            samples: AtomicU32::new(0),
            peak: AtomicU32::new(0),
            window_start: AtomicU64::new(0),
            epoch: Instant::now(),
            controller: Mutex::new(Controller {
                estimate: f64::from(config.initial_limit),
                min_rtt: 0.0,
                next_refresh: config.min_rtt_refresh,
                probe: Probe::Measuring(f64::from(config.initial_limit)),
            }),
            gauge,
        }
    }

    /// The limit now.
    #[cfg(test)]
    pub(super) fn current(&self) -> u32 {
        self.limit.load(Relaxed)
    }

    /// Admits the call, or fails at once with [`Error::is_bulkhead_full`] when the limit is
    /// reached.
    pub(crate) fn enter(&self) -> Result<Ticket<'_>, Error> {
        let limit = self.limit.load(Relaxed);
        let before = self.in_flight.fetch_add(1, Relaxed);
        if before >= limit {
            self.in_flight.fetch_sub(1, Relaxed);
            return Err(Error::adaptive_limit_reached(&self.name, limit));
        }
        self.peak.fetch_max(before + 1, Relaxed);
        Ok(Ticket {
            limit: self,
            start: self.now(),
        })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn record(&self, start: u64) {
        let now = self.now();
        self.rtt_sum.fetch_add(now.saturating_sub(start), Relaxed);
        let samples = self.samples.fetch_add(1, Relaxed) + 1;
        let window = u64::try_from(self.config.sample_window.as_nanos()).unwrap_or(u64::MAX);
        let over = now.saturating_sub(self.window_start.load(Relaxed)) >= window;
        if over && samples >= self.config.min_samples {
            if let Ok(mut controller) = self.controller.try_lock() {
                self.close_window(&mut controller, now);
            }
        }
    }

    /// Ends the window and sets the next limit from its average latency.
    fn close_window(&self, controller: &mut Controller, now: u64) {
        // A call finishing between the swaps lands in one window's sum and the next one's
        // count: a skew of one sample, not worth a lock on the call path.
        let samples = self.samples.swap(0, Relaxed);
        let sum = self.rtt_sum.swap(0, Relaxed);
        let peak = self.peak.swap(self.in_flight.load(Relaxed), Relaxed);
        self.window_start.store(now, Relaxed);
        if samples == 0 {
            return;
        }
        // At least a nanosecond: calls too quick to measure (an in-memory service under paused
        // time) would make the gradient 0/0 and the limit zero.
        let rtt = (sum as f64 / f64::from(samples)).max(1.0);
        let config = &self.config;
        let now = Duration::from_nanos(now);
        let next = match controller.probe {
            Probe::Draining(saved) => {
                controller.probe = Probe::Measuring(saved);
                f64::from(config.min_limit)
            }
            Probe::Measuring(saved) => {
                controller.probe = Probe::Off;
                controller.min_rtt = rtt;
                controller.next_refresh = now + config.min_rtt_refresh;
                saved
            }
            Probe::Off if now >= controller.next_refresh => {
                controller.probe = Probe::Draining(controller.estimate);
                f64::from(config.min_limit)
            }
            Probe::Off => {
                if controller.min_rtt == 0.0 || rtt < controller.min_rtt {
                    controller.min_rtt = rtt;
                }
                let limit = controller.estimate;
                let gradient = (config.tolerance * controller.min_rtt / rtt).clamp(0.5, 1.0);
                let mut target = limit * gradient + limit.sqrt();
                // A client that never came near its limit learnt nothing about a larger one.
                if f64::from(peak) < limit / 2.0 {
                    target = target.min(limit);
                }
                limit * (1.0 - config.smoothing) + target * config.smoothing
            }
        };
        let next = next.clamp(f64::from(config.min_limit), f64::from(config.max_limit));
        if !matches!(controller.probe, Probe::Draining(_) | Probe::Measuring(_)) {
            controller.estimate = next;
        }
        // Within [min_limit, max_limit], both u32: the conversion loses nothing.
        let admitted = next.round() as u32;
        self.limit.store(admitted, Relaxed);
        self.gauge.set(f64::from(admitted));
        tracing::trace!(client = %self.name, rtt_ms = rtt / 1e6, limit = admitted, "adaptive concurrency limit");
    }
}

impl Ticket<'_> {
    /// Records the call's latency: it finished (with whatever outcome).
    pub(crate) fn finish(self) {
        self.limit.record(self.start);
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.limit.in_flight.fetch_sub(1, Relaxed);
    }
}
