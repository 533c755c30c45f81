//! A per-thread cache of the services' current snapshots, so that a pick reads its snapshot
//! with one plain load instead of arc-swap's guarded load (a store and a compare-and-swap on
//! the thread's debt slot per pick). Each entry also holds the thread's random source for the
//! service, so a pick's draws write no shared state either.
//!
//! Each thread keeps an [`arc_swap::Cache`] per service it picked for: it holds the snapshot it
//! last saw and revalidates it by comparing pointers, loading anew only after a swap. The cost:
//! a thread keeps the snapshot it last used until its next pick for that service, and an entry
//! outlives its service until the thread caches another one (dead entries are pruned then).

use std::cell::RefCell;
use std::sync::Arc;

use arc_swap::{ArcSwap, Cache};

use crate::rng::LocalRng;
use crate::snapshot::Snapshot;

/// Where a service's current snapshot is published.
pub(crate) type Published = Arc<ArcSwap<Snapshot>>;

struct Entry {
    /// Identifies the service (compared by pointer) and tells when it is gone.
    published: Published,
    cache: Cache<Published, Arc<Snapshot>>,
    rng: LocalRng,
}

thread_local! {
    static ENTRIES: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on the current snapshot of `published` and the thread's random source for it,
/// seeded with `seed()` when the thread first picks for the service. Falls back to a guarded
/// load and a new source when the thread's cache is unavailable: during thread teardown, or
/// re-entered from a lifecycle hook that picks from within a pick.
pub(crate) fn with_current<R>(
    published: &Published,
    seed: impl Fn() -> u64,
    mut f: impl FnMut(&Snapshot, &LocalRng) -> R,
) -> R {
    let cached = ENTRIES.try_with(|entries| {
        let mut entries = entries.try_borrow_mut().ok()?;
        let index = match entries
            .iter()
            .position(|e| Arc::ptr_eq(&e.published, published))
        {
            Some(index) => index,
            None => {
                // Only this cache and its entry's own handle still hold a dropped service's.
                entries.retain(|e| Arc::strong_count(&e.published) > 2);
                entries.push(Entry {
                    published: published.clone(),
                    cache: Cache::new(published.clone()),
                    rng: LocalRng::new(seed()),
                });
                entries.len() - 1
            }
        };
        let entry = &mut entries[index];
        Some(f(entry.cache.load(), &entry.rng))
    });
    match cached {
        Ok(Some(result)) => result,
        _ => f(&published.load(), &LocalRng::new(seed())),
    }
}
