//! The rate limit on on-demand re-registrations (Netflix's `InstanceInfoReplicator`): a token
//! bucket holding `BURST` tokens, refilled at `60 × BURST / interval` per minute (4 a minute for
//! the default 30 s replication interval).

use std::time::Duration;

use tokio::time::Instant;

/// Re-registrations allowed at once, before the bucket must refill (Netflix's `burstSize`).
pub(crate) const BURST: u32 = 2;

/// A token bucket for on-demand re-registrations, kept as the time at which the bucket would be
/// full again (the generic cell rate algorithm): exact in integer time, so a token is never
/// reported as due "now" while still missing a rounding error's worth.
#[derive(Debug)]
pub(crate) struct OnDemandLimiter {
    /// When every token taken so far will have come back.
    full_at: Instant,
    /// The time one token takes to come back: the replication interval / [`BURST`].
    refill_every: Duration,
}

impl OnDemandLimiter {
    /// A full bucket refilled at `60 × BURST / interval` tokens a minute.
    pub(crate) fn new(replication_interval: Duration) -> OnDemandLimiter {
        OnDemandLimiter {
            full_at: Instant::now(),
            refill_every: (replication_interval / BURST).max(Duration::from_millis(1)),
        }
    }

    /// Takes a token, or says when the next one will be there (always later than `now`).
    pub(crate) fn take(&mut self, now: Instant) -> Result<(), Instant> {
        let full_at = self.full_at.max(now);
        // The bucket may be emptied by at most BURST tokens ahead of the clock.
        let allowed_ahead = self.refill_every * (BURST - 1);
        if full_at - now <= allowed_ahead {
            self.full_at = full_at + self.refill_every;
            Ok(())
        } else {
            Err(full_at - allowed_ahead)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_at_once_then_one_every_fifteen_seconds_for_a_thirty_second_interval() {
        let mut limiter = OnDemandLimiter::new(Duration::from_secs(30));
        let start = Instant::now();
        assert_eq!(limiter.take(start), Ok(()));
        assert_eq!(limiter.take(start), Ok(()));
        let at = Duration::from_secs(1);
        assert_eq!(
            limiter.take(start + at),
            Err(start + Duration::from_secs(15))
        );
        assert_eq!(limiter.take(start + Duration::from_secs(15)), Ok(()));
        assert!(limiter.take(start + Duration::from_secs(16)).is_err());
        // After a quiet minute the bucket holds the burst again, no more.
        let later = start + Duration::from_secs(90);
        assert_eq!(limiter.take(later), Ok(()));
        assert_eq!(limiter.take(later), Ok(()));
        assert!(limiter.take(later).is_err());
    }
}
