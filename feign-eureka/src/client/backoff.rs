//! Exponential backoff with jitter for the heartbeat and fetch loops, on feign-core's schedule
//! and jitter.

use std::time::Duration;

use feign_core::backoff::{exponential, jitter_down};

/// Doubles a delay after each failure up to `interval * bound`, and resets on success.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    interval: Duration,
    max: Duration,
    /// Failures since the last success.
    failures: u32,
}

impl Backoff {
    /// A backoff for a task that normally runs every `interval`, growing to at most `bound`
    /// times that (Eureka's `*ExponentialBackOffBound`, default 10).
    pub(crate) fn new(interval: Duration, bound: u32) -> Self {
        let max = interval.saturating_mul(bound.max(1));
        Backoff {
            interval,
            max,
            failures: 0,
        }
    }

    /// The delay before the next run after a success: the interval.
    pub(crate) fn succeeded(&mut self) -> Duration {
        self.failures = 0;
        self.interval
    }

    /// The delay before the next run after a failure: the previous delay doubled (capped), less
    /// a random part of up to a quarter so failing clients do not retry in lockstep.
    pub(crate) fn failed(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        jitter_down(self.ceiling(), 4)
    }

    /// The delay before jitter: the interval doubled once per failure, capped.
    fn ceiling(&self) -> Duration {
        exponential(
            self.interval,
            2.0,
            self.max,
            self.failures.saturating_add(1),
        )
    }

    /// The largest delay this backoff can reach.
    #[cfg(test)]
    pub(crate) fn max(&self) -> Duration {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_bound_and_resets() {
        let mut b = Backoff::new(Duration::from_secs(30), 10);
        let mut ceilings = Vec::new();
        for _ in 0..6 {
            let d = b.failed();
            ceilings.push(b.ceiling().as_secs());
            assert!(d <= b.ceiling() && d >= b.ceiling() * 3 / 4, "{d:?}");
        }
        assert_eq!(ceilings, [60, 120, 240, 300, 300, 300]);
        assert_eq!(b.max(), Duration::from_secs(300));
        assert_eq!(b.succeeded(), Duration::from_secs(30));
        assert_eq!(b.ceiling(), Duration::from_secs(30));
    }
}
