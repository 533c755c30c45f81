//! A snapshot's hold on an instance's live state, and the in-flight count it makes free.
//!
//! Every attempt holds one reference to its instance's [`InstanceStats`] (inside its `Chosen`)
//! from the pick until it is completed or dropped, and every snapshot listing the instance holds
//! one through a [`Listed`], which also counts itself in the stats. The attempts in flight are
//! then the reference count minus the listings: a pick moves one shared counter, not two, and an
//! attempt dropped without being reported can never leave the count too high.

use std::ops::Deref;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::stats::InstanceStats;

/// One snapshot's reference to an instance's stats.
pub(crate) struct Listed(Arc<InstanceStats>);

impl Listed {
    pub(crate) fn new(stats: Arc<InstanceStats>) -> Listed {
        // Counted before the reference exists, so a concurrent reader never sees an extra
        // attempt (only, for a moment, one fewer, which reads as zero).
        stats.listings.fetch_add(1, Ordering::Relaxed);
        Listed(stats)
    }

    /// Attempts in flight to the instance.
    pub(crate) fn in_flight(&self) -> u32 {
        let references = Arc::strong_count(&self.0);
        let listings = self.0.listings.load(Ordering::Relaxed) as usize;
        u32::try_from(references.saturating_sub(listings)).unwrap_or(u32::MAX)
    }

    /// A reference for one attempt, which starts it: it counts as in flight until dropped.
    pub(crate) fn attempt(&self) -> Arc<InstanceStats> {
        self.0.started();
        self.0.clone()
    }

    /// Whether both list the same stats (not merely the same instance).
    pub(crate) fn same(&self, other: &Listed) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Clone for Listed {
    fn clone(&self) -> Listed {
        Listed::new(self.0.clone())
    }
}

impl Drop for Listed {
    fn drop(&mut self) {
        // Uncounted while the reference still exists: a reader may see one attempt too many
        // for a moment, never a negative count.
        self.0.listings.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Deref for Listed {
    type Target = InstanceStats;

    fn deref(&self) -> &InstanceStats {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ServiceState;
    use crate::ServiceInstance;

    fn listed() -> Listed {
        let instance = ServiceInstance::new("svc", "127.0.0.1", 80);
        Listed::new(Arc::new(InstanceStats::new(
            instance,
            ServiceState::for_tests(),
            1e6,
            0,
        )))
    }

    #[test]
    fn attempts_count_until_dropped_and_listings_do_not() {
        let first = listed();
        let second = first.clone();
        assert_eq!(first.in_flight(), 0);
        let attempts: Vec<_> = (0..3).map(|_| first.attempt()).collect();
        assert_eq!(second.in_flight(), 3);
        drop(first);
        assert_eq!(second.in_flight(), 3);
        drop(attempts);
        assert_eq!(second.in_flight(), 0);
    }
}
