//! State shared by the client handle, its background tasks and its suppliers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use tokio::sync::watch;
use tokio::time::Instant;

use super::registry::Snapshot;
use super::routing::RoutingPolicy;

/// The gauge of [`Shared::staleness`], in seconds.
pub(crate) const STALENESS: &str = "eureka.client.registry.staleness";

/// The published registry snapshot, its version, and when it was last refreshed.
pub(crate) struct Shared {
    snapshot: ArcSwap<Snapshot>,
    version: AtomicU64,
    version_tx: watch::Sender<u64>,
    last_fetch: Mutex<Option<Instant>>,
    /// [`STALENESS`], set after every fetch attempt and every read of the staleness.
    staleness: metrics::Gauge,
    pub(crate) policy: RoutingPolicy,
}

impl Shared {
    pub(crate) fn new(policy: RoutingPolicy) -> Arc<Shared> {
        let (version_tx, _) = watch::channel(0);
        Arc::new(Shared {
            snapshot: ArcSwap::from_pointee(Snapshot::default()),
            version: AtomicU64::new(0),
            version_tx,
            last_fetch: Mutex::new(None),
            staleness: {
                metrics::describe_gauge!(
                    STALENESS,
                    metrics::Unit::Seconds,
                    "Time since the local registry was last fetched successfully"
                );
                metrics::gauge!(STALENESS)
            },
            policy,
        })
    }

    /// The current snapshot (one atomic load and a reference count).
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.load_full()
    }

    /// Swaps in a new snapshot, bumps the version and wakes everyone waiting for a change.
    pub(crate) fn publish(&self, snapshot: Snapshot) {
        self.snapshot.store(Arc::new(snapshot));
        let version = self.version.fetch_add(1, Ordering::AcqRel) + 1;
        self.version_tx.send_replace(version);
    }

    /// Records a successful fetch (whether or not anything changed).
    pub(crate) fn fetched(&self) {
        *self.last_fetch.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }

    /// When the registry was last fetched successfully.
    pub(crate) fn last_fetch(&self) -> Option<Instant> {
        *self.last_fetch.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How long ago the registry was last fetched successfully, also set on [`STALENESS`].
    pub(crate) fn staleness(&self) -> Option<std::time::Duration> {
        let staleness = self.last_fetch().map(|at| at.elapsed());
        if let Some(staleness) = staleness {
            self.staleness.set(staleness.as_secs_f64());
        }
        staleness
    }

    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.version_tx.subscribe()
    }
}
