//! The settings of the adaptive concurrency limit.

use std::time::Duration;

use crate::Error;

/// An adaptive concurrency limit's settings; turn it on with
/// [`Builder::adaptive_concurrency`](crate::Builder::adaptive_concurrency).
///
/// A bulkhead whose size follows latency, as Envoy's adaptive concurrency filter and Netflix's
/// concurrency-limits do: the client measures the average latency of its calls over each
/// `sample_window` and compares it with the lowest it has seen (the unloaded latency). While
/// latency stays within `tolerance` of that minimum the limit grows by about its square root per
/// window; when it rises above, the limit shrinks in proportion (at most by half per window).
/// A call over the limit fails at once with [`Error::is_bulkhead_full`] instead of queuing.
///
/// The first window runs at `min_limit` to measure the unloaded latency, then the limit starts at
/// `initial_limit`. Every `min_rtt_refresh` the limit drops to `min_limit` again for two windows
/// (one to drain, one to measure), so that a service that got slower for good is not starved
/// forever.
#[derive(Debug, Clone, Copy, PartialEq)]
#[must_use]
pub struct AdaptiveLimitConfig {
    pub(crate) initial_limit: u32,
    pub(crate) min_limit: u32,
    pub(crate) max_limit: u32,
    pub(crate) sample_window: Duration,
    pub(crate) min_samples: u32,
    pub(crate) tolerance: f64,
    pub(crate) smoothing: f64,
    pub(crate) min_rtt_refresh: Duration,
}

impl Default for AdaptiveLimitConfig {
    fn default() -> Self {
        AdaptiveLimitConfig {
            initial_limit: 20,
            min_limit: 3,
            max_limit: 1000,
            sample_window: Duration::from_millis(100),
            min_samples: 10,
            tolerance: 1.25,
            smoothing: 0.5,
            min_rtt_refresh: Duration::from_secs(60),
        }
    }
}

impl AdaptiveLimitConfig {
    /// The limit before any latency was measured. Default 20.
    pub fn initial_limit(mut self, limit: u32) -> Self {
        self.initial_limit = limit;
        self
    }

    /// The limit never goes below this. Default 3 (Envoy's).
    pub fn min_limit(mut self, limit: u32) -> Self {
        self.min_limit = limit;
        self
    }

    /// The limit never goes above this. Default 1000 (Envoy's).
    pub fn max_limit(mut self, limit: u32) -> Self {
        self.max_limit = limit;
        self
    }

    /// How often the limit is recomputed: a window closes once this long has passed and it
    /// holds at least [`min_samples`](Self::min_samples) calls. Default 100 ms.
    pub fn sample_window(mut self, window: Duration) -> Self {
        self.sample_window = window;
        self
    }

    /// The fewest finished calls a window needs before it changes the limit. Default 10.
    pub fn min_samples(mut self, samples: u32) -> Self {
        self.min_samples = samples;
        self
    }

    /// How much slower than the unloaded latency calls may get before the limit shrinks, as a
    /// factor (at least 1). Default 1.25: Envoy's 25 % buffer.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// How far each window moves the limit toward its new value, over 0 and at most 1.
    /// Default 0.5.
    pub fn smoothing(mut self, smoothing: f64) -> Self {
        self.smoothing = smoothing;
        self
    }

    /// How often the unloaded latency is measured again. Default 60 s (Envoy's).
    pub fn min_rtt_refresh(mut self, every: Duration) -> Self {
        self.min_rtt_refresh = every;
        self
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let problem = if self.min_limit == 0 {
            "`min_limit` must be at least 1"
        } else if self.max_limit < self.min_limit {
            "`max_limit` must be at least `min_limit`"
        } else if self.max_limit as usize > tokio::sync::Semaphore::MAX_PERMITS {
            "`max_limit` is too large"
        } else if !(self.min_limit..=self.max_limit).contains(&self.initial_limit) {
            "`initial_limit` must be between `min_limit` and `max_limit`"
        } else if self.sample_window.is_zero() {
            "`sample_window` must be over zero"
        } else if self.min_samples == 0 {
            "`min_samples` must be at least 1"
        } else if !(self.tolerance >= 1.0 && self.tolerance.is_finite()) {
            "`tolerance` must be a finite factor of at least 1"
        } else if !(self.smoothing > 0.0 && self.smoothing <= 1.0) {
            "`smoothing` must be over 0 and at most 1"
        } else if self.min_rtt_refresh < self.sample_window {
            "`min_rtt_refresh` must be at least `sample_window`"
        } else {
            return Ok(());
        };
        Err(Error::builder(format!("adaptive concurrency: {problem}")))
    }
}
