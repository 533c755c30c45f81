//! The recently-changed queue behind `GET apps/delta`.

use std::collections::VecDeque;

use feign_eureka::model::InstanceInfo;

use crate::lease::Lease;
use crate::sync::{Arc, Mutex, MutexGuard};

/// Changed leases with the time of the change; entries older than the retention are dropped.
///
/// A change to a stored lease and its entry are made in one step under the queue's lock, so a
/// reader of the queue never finds a change without its entry (checked by the models of
/// `tests/loom/`).
#[derive(Debug, Default)]
pub(crate) struct DeltaQueue {
    entries: Mutex<VecDeque<(u64, Arc<Lease>)>>,
}

impl DeltaQueue {
    /// Records a new `lease` at `now_ms`.
    pub(crate) fn push(&self, now_ms: u64, lease: Arc<Lease>) {
        self.lock().push_back((now_ms, lease));
    }

    /// Changes `lease` ([`Lease::change`]) and records the change at `now_ms` if it was made.
    pub(crate) fn change(
        &self,
        now_ms: u64,
        lease: &Arc<Lease>,
        make: impl FnMut(&InstanceInfo) -> InstanceInfo,
    ) -> Option<Arc<InstanceInfo>> {
        let mut entries = self.lock();
        let changed = lease.change(make)?;
        entries.push_back((now_ms, lease.clone()));
        Some(changed)
    }

    /// Cancels `lease` ([`Lease::cancel`]) and records it at `now_ms`.
    pub(crate) fn cancel(&self, now_ms: u64, lease: &Arc<Lease>) -> Arc<InstanceInfo> {
        let mut entries = self.lock();
        let gone = lease.cancel(now_ms);
        entries.push_back((now_ms, lease.clone()));
        gone
    }

    /// Drops entries recorded before `now_ms - retention_ms`.
    pub(crate) fn expire(&self, now_ms: u64, retention_ms: u64) {
        let cutoff = now_ms.saturating_sub(retention_ms);
        let mut entries = self.lock();
        while entries.front().is_some_and(|(at, _)| *at < cutoff) {
            entries.pop_front();
        }
    }

    /// The queued leases, oldest first.
    pub(crate) fn leases(&self) -> Vec<Arc<Lease>> {
        self.lock().iter().map(|(_, lease)| lease.clone()).collect()
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<(u64, Arc<Lease>)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}
