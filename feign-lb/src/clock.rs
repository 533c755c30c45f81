//! Time as the balancer keeps it: nanoseconds since the balancer's epoch in plain integers, so
//! per-instance deadlines fit in atomics. Uses tokio's clock, so tests can pause it.

use std::time::Duration;

use tokio::time::Instant;

/// A fixed epoch; readings are nanoseconds since it (0 is never a reading, so 0 can mean unset).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    epoch: Instant,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock {
            epoch: Instant::now(),
        }
    }

    /// Nanoseconds since the epoch, plus one so that a reading is never 0.
    pub(crate) fn now(&self) -> u64 {
        nanos(Instant::now().saturating_duration_since(self.epoch)).saturating_add(1)
    }
}

/// A duration in nanoseconds, saturating.
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
