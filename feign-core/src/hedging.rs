//! Hedged requests: when an idempotent call's first attempt has not answered after a delay,
//! a second goes to another instance; the first answer wins and the other is cancelled.

mod window;

use std::sync::Arc;
use std::time::Duration;

use crate::cow_map::{CopyOnWriteMap, QuickHash};
use crate::meta::MethodMeta;
use crate::Error;

pub(crate) use window::LatencyWindow;

/// When a load-balanced call sends a hedge: a further attempt to an instance not yet tried
/// while the earlier ones are still out. Set with
/// [`Builder::hedging`](crate::Builder::hedging); off by default.
///
/// The delay is fixed ([`HedgingConfig::after`]), or a percentile of the method's recent
/// latency ([`HedgingConfig::percentile`]).
///
/// Only idempotent calls with a buffered body are hedged, only through a
/// [`Resolver`](crate::resolve::Resolver), and each hedge is asked of the retry policy
/// ([`RetryPolicy::allow_hedge`](crate::retry::RetryPolicy::allow_hedge)): feign-lb's balancer pays
/// for it from a hedge budget of its own, a small share of the calls apart from the retry
/// budget, and sends none while most calls are slow (an overload, not an outlier).
#[derive(Debug, Clone, Copy, PartialEq)]
#[must_use]
pub struct HedgingConfig {
    pub(crate) delay: Duration,
    pub(crate) max_hedges: u32,
    /// The quantile of recent latency to hedge at; `None`: the fixed `delay`.
    pub(crate) percentile: Option<f64>,
    pub(crate) min_delay: Duration,
}

impl HedgingConfig {
    /// Calls a method must have made before its percentile is used; the fixed delay until then.
    pub const WARM_UP_SAMPLES: usize = window::WARM_UP;

    /// One hedge when no answer has come `delay` after the first attempt was sent.
    pub fn after(delay: Duration) -> Self {
        HedgingConfig {
            delay,
            max_hedges: 1,
            percentile: None,
            min_delay: Duration::from_millis(1),
        }
    }

    /// Up to `n` hedges per call, each `delay` after the one before (default 1; at most 10).
    pub fn max_hedges(mut self, n: u32) -> Self {
        self.max_hedges = n.min(10);
        self
    }

    /// Hedges when no answer has come after the `q` quantile (`0 < q < 1`, e.g. `0.95` for
    /// p95) of the method's recent first attempts: the last 1,000 of them, per client method.
    /// The delay given to [`after`](Self::after) is used until
    /// [`WARM_UP_SAMPLES`](Self::WARM_UP_SAMPLES) were seen. A `q` out of range fails
    /// [`Builder::build`](crate::Builder::build).
    ///
    /// A first attempt a hedge beat counts as lasting as long as the call did (it lasted at
    /// least that long), so hedging does not hide the slow calls it cut short.
    pub fn percentile(mut self, q: f64) -> Self {
        self.percentile = Some(q);
        self
    }

    /// The shortest delay a percentile gives (default 1 ms, the timer's granularity): a
    /// method answering faster is not hedged sooner.
    pub fn min_delay(mut self, floor: Duration) -> Self {
        self.min_delay = floor;
        self
    }

    /// The configuration error, if any: a percentile out of `(0, 1)`.
    pub(crate) fn check(&self) -> Result<(), Error> {
        match self.percentile {
            Some(q) if !(q > 0.0 && q < 1.0) => Err(Error::builder(format!(
                "hedging percentile must be between 0 and 1 (exclusive), e.g. 0.95; got {q}"
            ))),
            _ => Ok(()),
        }
    }
}

/// Hedging as a client runs it: the configuration and, for the percentile form only, the
/// recent latencies of each method (keyed by its metadata's address).
pub(crate) struct Hedging {
    pub(crate) config: HedgingConfig,
    windows: Option<CopyOnWriteMap<usize, Arc<LatencyWindow>, QuickHash>>,
}

impl Hedging {
    pub(crate) fn new(config: HedgingConfig) -> Self {
        Hedging {
            config,
            windows: config.percentile.map(|_| CopyOnWriteMap::new()),
        }
    }

    /// The delay before each hedge of a call of `meta`, and the window its first attempt's
    /// latency goes to (`None` for a fixed delay).
    pub(crate) fn delay_for(
        &self,
        meta: &'static MethodMeta,
    ) -> (Duration, Option<Arc<LatencyWindow>>) {
        let config = self.config;
        match (&self.windows, config.percentile) {
            (Some(windows), Some(q)) => {
                let window = windows.with(
                    std::ptr::from_ref(meta) as usize,
                    || Arc::new(LatencyWindow::new(q)),
                    Arc::clone,
                );
                (window.delay(config.delay, config.min_delay), Some(window))
            }
            _ => (config.delay, None),
        }
    }
}
