//! State shared by the client handle, its background tasks and its suppliers.

use std::sync::{Arc, Mutex};

use feign_lb::Versioned;
use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::registry::Snapshot;
use super::routing::RoutingPolicy;

/// The gauge of [`Shared::staleness`], in seconds.
pub(crate) const STALENESS: &str = "eureka.client.registry.staleness";

/// The published registry snapshot, its version, and when it was last refreshed.
pub(crate) struct Shared {
    snapshot: Versioned<Snapshot>,
    last_fetch: Mutex<Option<Instant>>,
    /// [`STALENESS`], set after every fetch attempt and every read of the staleness.
    staleness: metrics::Gauge,
    pub(crate) policy: RoutingPolicy,
}

impl Shared {
    pub(crate) fn new(policy: RoutingPolicy) -> Arc<Shared> {
        Arc::new(Shared {
            snapshot: Versioned::default(),
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
        self.snapshot.get()
    }

    /// Swaps in a new snapshot, bumps the version and wakes everyone waiting for a change.
    pub(crate) fn publish(&self, snapshot: Snapshot) {
        self.snapshot.publish(snapshot);
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

    /// The version of the published snapshot; grows at every [`Shared::publish`].
    pub(crate) fn version(&self) -> u64 {
        self.snapshot.version()
    }

    /// Resolves once the version is past `seen`.
    pub(crate) fn changed(&self, seen: u64) -> BoxFuture<'static, ()> {
        self.snapshot.changed(seen)
    }
}
