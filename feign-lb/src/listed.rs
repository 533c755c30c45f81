//! A snapshot's hold on an instance's live state, and the in-flight count it makes free.
//!
//! Every attempt holds one reference to its instance's [`InstanceStats`] (inside its `Chosen`)
//! from the pick until it is completed or dropped, and every snapshot listing the instance holds
//! one through a [`Listed`], which also counts itself in the stats. The attempts in flight are
//! then the reference count minus the listings: a pick moves one shared counter, not two, and an
//! attempt dropped without being reported can never leave the count too high.
//!
//! A snapshot that drops an instance with attempts in flight keeps its listing as retired
//! ([`retire`]), so the service's total still counts them; it lets go once they are done.
//! Rebuilds go one at a time ([`Rebuilding`]). The models of `tests/loom/` check the counts
//! across snapshot swaps.

use std::ops::Deref;

use crate::stats::InstanceStats;
use crate::sync::{Arc, ArcSwap, AtomicBool, Ordering};
use crate::ServiceInstance;

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
        // Counted before the reference exists, as in `new`.
        self.0.listings.fetch_add(1, Ordering::Relaxed);
        Listed(self.0.clone())
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

/// The listing a rebuild keeps for `instance`: `previous`, the listing found under its id, if it
/// lists that very instance (address, port, metadata, status: all equal), with its attempts in
/// flight, latency and ejection state; none when the instance changed under the same id, which
/// then starts afresh while the old listing is retired with its attempts.
pub(crate) fn reuse(previous: Option<&Listed>, instance: &ServiceInstance) -> Option<Listed> {
    previous
        .filter(|listed| listed.instance == *instance)
        .cloned()
}

/// What a new snapshot keeps of `previous` (the listed and retired instances of the snapshot it
/// replaces) as retired: the listings with attempts in flight that `listed_again` does not find
/// in the new list.
///
/// One rebuild at a time ([`Rebuilding`]): a listing cloned between the two reads of
/// [`Listed::in_flight`] can make it read one too few, and an attempt then in flight would go
/// uncounted. Listings dropped meanwhile (an old snapshot's last reader leaving) only make it
/// read one too many.
pub(crate) fn retire<'a>(
    previous: impl IntoIterator<Item = &'a Listed>,
    listed_again: impl Fn(&Listed) -> bool,
) -> Vec<Listed> {
    previous
        .into_iter()
        .filter(|s| s.in_flight() > 0 && !listed_again(s))
        .cloned()
        .collect()
}

/// The gate that lets one caller at a time rebuild a published snapshot, as [`retire`] needs.
#[derive(Debug, Default)]
pub(crate) struct Rebuilding(AtomicBool);

impl Rebuilding {
    /// Replaces what `published` holds with `rebuild` of it when `stale` finds it out of date,
    /// unless another caller is rebuilding (the current value stays published meanwhile). The
    /// value is read again once the gate is held, so a rebuild that ended in between is built
    /// on rather than made again from the value it replaced.
    pub(crate) fn run<T>(
        &self,
        published: &ArcSwap<T>,
        stale: impl Fn(&T) -> bool,
        rebuild: impl FnOnce(&T) -> T,
    ) {
        if !stale(&published.load()) || self.0.swap(true, Ordering::Acquire) {
            return;
        }
        let current = published.load();
        if stale(&current) {
            let next = rebuild(&current);
            drop(current);
            published.store(Arc::new(next));
        }
        self.0.store(false, Ordering::Release);
    }
}
