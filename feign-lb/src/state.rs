//! What one service's picks, completions and retries share besides its snapshot: the settings
//! a completion applies, the counters and hooks, and the service-wide ejection and slow-start
//! state.
//!
//! The snapshot is not here on purpose: it lists the instances whose stats report to this
//! state, so the state reaches the instance list only through [`Roster`], which the snapshot
//! implements, and only weakly: the instances' stats hold the state itself, so that a
//! completion reaches it without upgrading a weak reference. The dependencies point one way:
//! stats and retries → state ← snapshot.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use crate::clock::Clock;
use crate::config::Ejection;
use crate::lifecycle::{LifecycleHook, LiveCounters};
use crate::metrics::ServiceMetrics;

/// The service's current instance list, as an ejection needs to see it.
pub(crate) trait Roster: Send + Sync {
    /// How many instances are listed, and how many of them are ejected at `now`.
    fn ejections(&self, now: u64) -> (usize, usize);
}

/// State shared by a service's balancer, its instances' observers and its retry policy.
pub(crate) struct ServiceState {
    pub(crate) name: Arc<str>,
    pub(crate) clock: Clock,
    pub(crate) ejection: Ejection,
    pub(crate) slow_start_window_ns: u64,
    pub(crate) slow_start_min: f64,
    pub(crate) decay_ns: f64,
    pub(crate) default_rtt_ns: f64,
    pub(crate) error_penalty_ns: f64,
    pub(crate) failed_ttl_ns: u64,
    pub(crate) panic_threshold: f64,
    /// Whether completions keep the Peak-EWMA latency estimate: only the policy that reads it
    /// pays for its clock reading and arithmetic.
    pub(crate) tracks_latency: bool,
    pub(crate) counters: LiveCounters,
    pub(crate) metrics: ServiceMetrics,
    pub(crate) hooks: Arc<[Arc<dyn LifecycleHook>]>,
    /// The published instance list; weak, as the instances' stats hold this state.
    pub(crate) roster: Weak<dyn Roster>,
    /// Instances ejected now (expired ejections are subtracted when first noticed).
    pub(crate) ejected: AtomicUsize,
    /// When the last slow-start ramp ends (0: none running), so picks skip the clock otherwise.
    pub(crate) ramping_until: AtomicU64,
}

impl ServiceState {
    /// Notes a ramp starting at `start`, so picks keep checking ramps until it ends.
    pub(crate) fn note_ramp(&self, start: u64) {
        if self.slow_start_window_ns > 0 {
            self.ramping_until.fetch_max(
                start.saturating_add(self.slow_start_window_ns),
                Ordering::Relaxed,
            );
        }
    }

    /// Whether some instance may still be ramping up; reads the clock only while one was.
    pub(crate) fn ramping(&self, now: impl FnOnce() -> u64) -> bool {
        let until = self.ramping_until.load(Ordering::Relaxed);
        if until == 0 {
            return false;
        }
        if now() >= until {
            let _ =
                self.ramping_until
                    .compare_exchange(until, 0, Ordering::Relaxed, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Whether so many instances are ejected that picks balance across all of them: more than
    /// the threshold's share (Envoy's rule, healthy below the threshold), so that one of two
    /// ejected leaves the other to take every pick. Counted in the service's counters when so.
    pub(crate) fn panicking(&self, listed: usize) -> bool {
        let ejected = self.ejected.load(Ordering::Relaxed);
        let panic = ejected > 0 && (ejected as f64) > listed as f64 * self.panic_threshold;
        if panic {
            LiveCounters::bump(&self.counters.panic);
        }
        panic
    }

    /// Whether one more instance may be ejected at `now` without passing the cap of
    /// max(1, `max_percent` %) of the listed instances. Never once the service is gone.
    pub(crate) fn may_eject(&self, now: u64) -> bool {
        let Some(roster) = self.roster.upgrade() else {
            return false;
        };
        let (listed, ejected) = roster.ejections(now);
        let cap = ((listed as f64 * self.ejection.max_percent / 100.0).floor() as usize).max(1);
        ejected < cap
    }
}
