//! Exponential backoff with jitter for the heartbeat and fetch loops.

use std::time::Duration;

use rand::Rng;

/// Doubles a delay after each failure up to `interval * bound`, and resets on success.
#[derive(Debug, Clone)]
pub(crate) struct Backoff {
    interval: Duration,
    max: Duration,
    current: Duration,
}

impl Backoff {
    /// A backoff for a task that normally runs every `interval`, growing to at most `bound`
    /// times that (Eureka's `*ExponentialBackOffBound`, default 10).
    pub(crate) fn new(interval: Duration, bound: u32) -> Self {
        let max = interval.saturating_mul(bound.max(1));
        Backoff {
            interval,
            max,
            current: interval,
        }
    }

    /// The delay before the next run after a success: the interval.
    pub(crate) fn succeeded(&mut self) -> Duration {
        self.current = self.interval;
        self.current
    }

    /// The delay before the next run after a failure: the previous delay doubled (capped), less
    /// a random part of up to a quarter so failing clients do not retry in lockstep.
    pub(crate) fn failed(&mut self) -> Duration {
        self.current = self.current.saturating_mul(2).min(self.max);
        jitter_down(self.current, 4)
    }

    /// The largest delay this backoff can reach.
    #[cfg(test)]
    pub(crate) fn max(&self) -> Duration {
        self.max
    }
}

/// `delay` less a random amount of up to `delay / divisor`.
pub(crate) fn jitter_down(delay: Duration, divisor: u32) -> Duration {
    let span = delay / divisor.max(1);
    if span.is_zero() {
        return delay;
    }
    let cut = rand::rng().random_range(Duration::ZERO..=span);
    delay - cut
}

/// A random delay in `0..=max`.
pub(crate) fn random_up_to(max: Duration) -> Duration {
    if max.is_zero() {
        return max;
    }
    rand::rng().random_range(Duration::ZERO..=max)
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
            ceilings.push(b.current.as_secs());
            assert!(d <= b.current && d >= b.current * 3 / 4, "{d:?}");
        }
        assert_eq!(ceilings, [60, 120, 240, 300, 300, 300]);
        assert_eq!(b.max(), Duration::from_secs(300));
        assert_eq!(b.succeeded(), Duration::from_secs(30));
    }
}
