//! Wall-clock milliseconds that follow tokio's clock, so paused-time tests can move them.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// Epoch milliseconds derived from a tokio [`Instant`] taken at start-up.
///
/// Eureka stamps everything in wall-clock milliseconds; deriving them from tokio's clock keeps
/// the stamps monotonic and lets `tokio::time::pause()` drive lease expiry in tests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin_ms: u64,
    origin: Instant,
}

impl Clock {
    /// A clock reading the current wall-clock time.
    pub(crate) fn new() -> Self {
        let origin_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Self {
            origin_ms,
            origin: Instant::now(),
        }
    }

    /// Milliseconds since the Unix epoch.
    pub(crate) fn now_ms(&self) -> u64 {
        let elapsed = u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.origin_ms.saturating_add(elapsed)
    }
}
