//! Rate limiting for warnings about repeated failures (a long outage must not flood the logs).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Warnings about one kind of failure are logged at most this often.
pub(crate) const WARN_EVERY: Duration = Duration::from_secs(60);

#[derive(Debug, Default)]
struct State {
    last: Option<Instant>,
    held_back: u64,
}

/// Lets a warning through at most once per period and counts the ones held back in between,
/// so the next warning can say how many failures went unlogged.
#[derive(Debug)]
pub(crate) struct WarnThrottle {
    period: Duration,
    state: Mutex<State>,
}

impl WarnThrottle {
    pub(crate) fn new(period: Duration) -> WarnThrottle {
        WarnThrottle {
            period,
            state: Mutex::new(State::default()),
        }
    }

    /// `Some(n)` when a warning may be logged now, `n` being how many were held back since the
    /// last one; `None` when this one must be held back (log it at debug level instead).
    pub(crate) fn permit(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if state
            .last
            .is_none_or(|at| now.duration_since(at) >= self.period)
        {
            state.last = Some(now);
            Some(std::mem::take(&mut state.held_back))
        } else {
            state.held_back += 1;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn one_warning_per_period_with_the_held_back_count() {
        let throttle = WarnThrottle::new(Duration::from_secs(60));
        assert_eq!(throttle.permit(), Some(0));
        for _ in 0..5 {
            tokio::time::sleep(Duration::from_secs(10)).await;
            assert_eq!(throttle.permit(), None);
        }
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(throttle.permit(), Some(5));
    }
}
