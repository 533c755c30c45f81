//! The recently-changed queue behind `GET apps/delta`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::lease::Lease;

/// Changed leases with the time of the change; entries older than the retention are dropped.
#[derive(Debug, Default)]
pub(crate) struct DeltaQueue {
    entries: Mutex<VecDeque<(u64, Arc<Lease>)>>,
}

impl DeltaQueue {
    /// Records a change to `lease` at `now_ms`.
    pub(crate) fn push(&self, now_ms: u64, lease: Arc<Lease>) {
        self.lock().push_back((now_ms, lease));
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

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(u64, Arc<Lease>)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}
