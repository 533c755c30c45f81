//! Backoff schedules and jitter, for retry policies and background loops.
//!
//! [`Retryer`](crate::Retryer) draws its delays with [`exponential`] and [`full_jitter`];
//! feign-eureka's heartbeat and fetch loops back off with [`exponential`] and [`jitter_down`];
//! feign-lb's retries across instances take their ceilings from [`exponential`].

use std::time::Duration;

use rand::Rng;

/// The delay ceiling before retry number `retry` (1-based): `base × multiplier^(retry − 1)`,
/// capped at `max`.
///
/// ```
/// use std::time::Duration;
/// use feign_core::backoff::exponential;
///
/// let ms = |n| exponential(Duration::from_millis(100), 2.0, Duration::from_secs(1), n);
/// assert_eq!(ms(1), Duration::from_millis(100));
/// assert_eq!(ms(3), Duration::from_millis(400));
/// assert_eq!(ms(10), Duration::from_secs(1));
/// ```
pub fn exponential(base: Duration, multiplier: f64, max: Duration, retry: u32) -> Duration {
    let exp = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
    let secs = base.as_secs_f64() * multiplier.powi(exp);
    let ceiling = if secs.is_finite() {
        Duration::from_secs_f64(secs.min(max.as_secs_f64()))
    } else {
        max
    };
    ceiling.min(max)
}

/// A random delay in `0..=ceiling` ("full jitter").
pub fn full_jitter(ceiling: Duration) -> Duration {
    if ceiling.is_zero() {
        return ceiling;
    }
    let nanos = crate::clock::nanos(ceiling);
    Duration::from_nanos(rand::rng().random_range(0..=nanos))
}

/// `delay` less a random amount of up to `delay / divisor` (a `divisor` of 0 counts as 1), so
/// clients that fail together do not retry in lockstep.
pub fn jitter_down(delay: Duration, divisor: u32) -> Duration {
    let span = delay / divisor.max(1);
    if span.is_zero() {
        return delay;
    }
    let cut = rand::rng().random_range(Duration::ZERO..=span);
    delay - cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_its_bounds() {
        let d = Duration::from_secs(8);
        for _ in 0..100 {
            assert!(full_jitter(d) <= d);
            let down = jitter_down(d, 4);
            assert!(down <= d && down >= Duration::from_secs(6), "{down:?}");
        }
        assert_eq!(full_jitter(Duration::ZERO), Duration::ZERO);
        assert_eq!(
            jitter_down(Duration::from_nanos(3), 4),
            Duration::from_nanos(3)
        );
    }

    #[test]
    fn exponential_survives_overflow() {
        let max = Duration::from_secs(30);
        assert_eq!(
            exponential(Duration::from_secs(1), 1e300, max, u32::MAX),
            max
        );
        assert_eq!(
            exponential(Duration::from_secs(1), 1.0, max, 0),
            Duration::from_secs(1)
        );
    }
}
