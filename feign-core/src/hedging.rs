//! Hedged requests: when an idempotent call's first attempt has not answered after a delay,
//! a second goes to another instance; the first answer wins and the other is cancelled.

use std::time::Duration;

/// When a load-balanced call sends a hedge: a further attempt to an instance not yet tried
/// while the earlier ones are still out. Set with
/// [`Builder::hedging`](crate::Builder::hedging); off by default.
///
/// Only idempotent calls with a buffered body are hedged, only through a
/// [`Resolver`](crate::Resolver), and each hedge is asked of the retry policy
/// ([`RetryPolicy::allow_hedge`](crate::RetryPolicy::allow_hedge)): a balancer's retry
/// budget pays for it as for a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct HedgingConfig {
    pub(crate) delay: Duration,
    pub(crate) max_hedges: u32,
}

impl HedgingConfig {
    /// One hedge when no answer has come `delay` after the first attempt was sent.
    pub fn after(delay: Duration) -> Self {
        HedgingConfig {
            delay,
            max_hedges: 1,
        }
    }

    /// Up to `n` hedges per call, each `delay` after the one before (default 1; at most 10).
    pub fn max_hedges(mut self, n: u32) -> Self {
        self.max_hedges = n.min(10);
        self
    }
}
