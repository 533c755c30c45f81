//! Time in plain integers, following tokio's clock so `tokio::time::pause()` moves it: the
//! balancer's per-instance deadlines, the circuit breaker's open deadline, Eureka's wall-clock
//! timestamps.
//!
//! Plumbing shared by feign-rs crates; not a stable API.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// A fixed epoch, taken at [`Clock::new`], that readings count from.
///
/// [`Clock::now`] is nanoseconds since the epoch, never 0 (so 0 can mean "unset" in an
/// atomic); [`Clock::now_ms`] is wall-clock milliseconds since the Unix epoch, read once at
/// [`Clock::new`] and moved on by tokio's monotonic clock, so the stamps never go back and
/// paused-time tests can move them.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    epoch: Instant,
    epoch_unix_ms: u64,
}

impl Clock {
    /// A clock whose epoch is now.
    pub fn new() -> Clock {
        let epoch_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Clock {
            epoch: Instant::now(),
            epoch_unix_ms,
        }
    }

    /// Nanoseconds since the epoch, plus one so that a reading is never 0.
    pub fn now(&self) -> u64 {
        self.at(Instant::now())
    }

    /// The reading [`Clock::now`] gives at `instant` (1 for any instant before the epoch).
    pub fn at(&self, instant: Instant) -> u64 {
        nanos(instant.saturating_duration_since(self.epoch)).saturating_add(1)
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        let elapsed = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.epoch_unix_ms.saturating_add(elapsed)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

/// A duration in nanoseconds, saturating at `u64::MAX`.
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn readings_follow_tokio_time() {
        let clock = Clock::new();
        let (ns, ms) = (clock.now(), clock.now_ms());
        assert!(ns >= 1);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(clock.now() - ns, 2_000_000_000);
        assert_eq!(clock.now_ms() - ms, 2_000);
        assert_eq!(
            clock.at(Instant::now() + Duration::from_nanos(5)),
            clock.now() + 5
        );
        assert_eq!(nanos(Duration::MAX), u64::MAX);
    }
}
