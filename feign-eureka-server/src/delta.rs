//! The recently-changed queue behind `GET apps/delta`.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet, VecDeque};

use feign_eureka::model::InstanceInfo;

use crate::lease::Lease;
use crate::record;
use crate::sync::{Arc, Mutex, MutexGuard};

/// Superseded leases may hold this much before the queue drops their entries.
const STALE_BYTES: usize = 4 * 1024 * 1024;

/// Changed leases with the time of the change; entries older than the retention are dropped.
///
/// A change to a stored lease and its entry are made in one step under the queue's lock, so a
/// reader of the queue never finds a change without its entry (checked by the models of
/// `tests/loom/`).
///
/// A re-registration stores a new lease, and every entry of the lease it replaced becomes
/// stale: the delta shows each instance's newest lease, so those entries show nothing, yet each
/// holds a full copy of the instance. Stale entries are dropped once they are half the queue or
/// their leases hold [`STALE_BYTES`], so the queue holds about one copy of each changed
/// instance however often it is registered again.
///
/// The delta document shows each queued instance's newest lease once: the queue keeps what those
/// take in a document ([`Lease::wire_bytes`]) within a bound, dropping its oldest entries early
/// past it (a client that misses them sees the registry's hash differ and fetches it whole), so
/// churn of new instances cannot make the delta larger than a client reads.
#[derive(Debug, Default)]
pub(crate) struct DeltaQueue {
    queue: Mutex<Queue>,
}

#[derive(Debug, Default)]
struct Queue {
    entries: VecDeque<(u64, Arc<Lease>)>,
    /// Each queued instance's newest lease, by application and instance id, with its entries.
    newest: HashMap<(String, String), (Arc<Lease>, usize)>,
    /// What the newest leases take in a delta document, and the most they may take (0: no
    /// bound).
    newest_bytes: usize,
    max_bytes: usize,
    /// Entries of superseded leases, and about what those leases hold.
    stale_entries: usize,
    stale_bytes: usize,
    /// Changes recorded since the start.
    recorded: u64,
}

/// Application and instance id.
fn key(lease: &Lease) -> (String, String) {
    let info = lease.load();
    (record::app(&info).to_owned(), record::id(&info))
}

/// About the heap and inline bytes `info` holds.
pub(crate) fn footprint(info: &InstanceInfo) -> usize {
    let text = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    let entry = 2 * std::mem::size_of::<String>() + 16;
    std::mem::size_of::<InstanceInfo>()
        + info.host_name.len()
        + info.app.len()
        + info.ip_addr.len()
        + [
            &info.instance_id,
            &info.sid,
            &info.app_group_name,
            &info.home_page_url,
            &info.status_page_url,
            &info.health_check_url,
            &info.secure_health_check_url,
            &info.vip_address,
            &info.secure_vip_address,
            &info.asg_name,
        ]
        .into_iter()
        .map(text)
        .sum::<usize>()
        + info
            .metadata
            .iter()
            .map(|(k, v)| k.len() + v.len() + entry)
            .sum::<usize>()
}

impl Queue {
    fn record(&mut self, now_ms: u64, lease: &Arc<Lease>) {
        let newest = match self.newest.entry(key(lease)) {
            Entry::Occupied(newest) => newest.into_mut(),
            Entry::Vacant(vacant) => {
                self.newest_bytes += lease.wire_bytes;
                vacant.insert((lease.clone(), 0))
            }
        };
        if !Arc::ptr_eq(&newest.0, lease) {
            let replaced = std::mem::replace(newest, (lease.clone(), 0));
            self.newest_bytes = self.newest_bytes + lease.wire_bytes - replaced.0.wire_bytes;
            self.stale_entries += replaced.1;
            self.stale_bytes += footprint(&replaced.0.load());
        }
        newest.1 += 1;
        self.recorded += 1;
        self.entries.push_back((now_ms, lease.clone()));
        if self.stale_entries > 0
            && (self.stale_bytes > STALE_BYTES || self.stale_entries * 2 > self.entries.len())
        {
            self.drop_stale();
        }
        while self.max_bytes > 0 && self.newest_bytes > self.max_bytes && self.entries.len() > 1 {
            self.pop_front();
        }
    }

    fn drop_stale(&mut self) {
        let newest: HashSet<*const Lease> = self
            .newest
            .values()
            .map(|(lease, _)| Arc::as_ptr(lease))
            .collect();
        self.entries
            .retain(|(_, lease)| newest.contains(&Arc::as_ptr(lease)));
        self.stale_entries = 0;
        self.stale_bytes = 0;
    }

    fn pop_front(&mut self) {
        let Some((_, lease)) = self.entries.pop_front() else {
            return;
        };
        let key = key(&lease);
        match self.newest.get_mut(&key) {
            Some(newest) if Arc::ptr_eq(&newest.0, &lease) => {
                newest.1 -= 1;
                if newest.1 == 0 {
                    self.newest.remove(&key);
                    self.newest_bytes -= lease.wire_bytes;
                }
            }
            _ => {
                self.stale_entries = self.stale_entries.saturating_sub(1);
                if self.stale_entries == 0 {
                    self.stale_bytes = 0;
                }
            }
        }
    }
}

impl DeltaQueue {
    /// An empty queue whose newest leases take at most `max_bytes` in a delta document.
    pub(crate) fn bounded(max_bytes: usize) -> Self {
        let queue = Queue {
            max_bytes,
            ..Queue::default()
        };
        Self {
            queue: Mutex::new(queue),
        }
    }

    /// Records a new `lease` at `now_ms`.
    pub(crate) fn push(&self, now_ms: u64, lease: Arc<Lease>) {
        self.lock().record(now_ms, &lease);
    }

    /// Changes `lease` ([`Lease::change`]) and records the change at `now_ms` if it was made.
    pub(crate) fn change(
        &self,
        now_ms: u64,
        lease: &Arc<Lease>,
        make: impl FnMut(&InstanceInfo) -> InstanceInfo,
    ) -> Option<Arc<InstanceInfo>> {
        let mut queue = self.lock();
        let changed = lease.change(make)?;
        queue.record(now_ms, lease);
        Some(changed)
    }

    /// Cancels `lease` ([`Lease::cancel`]) and records it at `now_ms`.
    pub(crate) fn cancel(&self, now_ms: u64, lease: &Arc<Lease>) -> Arc<InstanceInfo> {
        let mut queue = self.lock();
        let gone = lease.cancel(now_ms);
        queue.record(now_ms, lease);
        gone
    }

    /// Drops entries recorded before `now_ms - retention_ms`.
    pub(crate) fn expire(&self, now_ms: u64, retention_ms: u64) {
        let cutoff = now_ms.saturating_sub(retention_ms);
        let mut queue = self.lock();
        while queue.entries.front().is_some_and(|(at, _)| *at < cutoff) {
            queue.pop_front();
        }
    }

    /// The queued leases, oldest first.
    pub(crate) fn leases(&self) -> Vec<Arc<Lease>> {
        let queue = self.lock();
        queue
            .entries
            .iter()
            .map(|(_, lease)| lease.clone())
            .collect()
    }

    /// How many changes were recorded since the start.
    pub(crate) fn recorded(&self) -> u64 {
        self.lock().recorded
    }

    /// About the bytes the queued leases' instances hold, each lease counted once.
    pub(crate) fn held_bytes(&self) -> usize {
        let queue = self.lock();
        let mut seen = HashSet::new();
        queue
            .entries
            .iter()
            .filter(|(_, lease)| seen.insert(Arc::as_ptr(lease)))
            .map(|(_, lease)| footprint(&lease.load()))
            .sum()
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}
