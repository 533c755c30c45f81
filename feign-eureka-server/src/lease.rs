//! A registration's lease: its timestamps, kept in atomics so renewals need no write lock, and
//! the stored instance, which a cancellation turns into a `DELETED` record that no change made
//! concurrently can replace (checked by the models of `tests/loom/`).

use std::collections::BTreeMap;

use feign_eureka::model::{ActionType, InstanceInfo};

use crate::record;
use crate::sync::{Arc, ArcSwap, AtomicBool, AtomicU64, Ordering};

/// Leases by upper-case application name, then instance id.
pub(crate) type AppTable = BTreeMap<String, BTreeMap<String, Arc<Lease>>>;

/// One registered instance and the lease that keeps it alive.
#[derive(Debug)]
pub(crate) struct Lease {
    /// The stored instance; replaced whole on every change ([`Lease::change`], [`Lease::cancel`]).
    instance: ArcSwap<InstanceInfo>,
    pub(crate) registration_ms: u64,
    pub(crate) renewal_interval_secs: u32,
    pub(crate) duration_secs: u32,
    last_update_ms: AtomicU64,
    eviction_ms: AtomicU64,
    service_up_ms: AtomicU64,
    /// Set once the lease has proved its client alive ([`Lease::establish`]).
    established: AtomicBool,
    netflix_expiry: bool,
    /// The most bytes the instance takes in a registry document ([`Lease::sized`]).
    pub(crate) wire_bytes: usize,
}

impl Lease {
    /// A lease for `instance` starting at `now_ms`.
    pub(crate) fn new(
        instance: InstanceInfo,
        renewal_interval_secs: u32,
        duration_secs: u32,
        now_ms: u64,
        netflix_expiry: bool,
    ) -> Self {
        Self {
            instance: ArcSwap::from_pointee(instance),
            registration_ms: now_ms,
            renewal_interval_secs,
            duration_secs,
            last_update_ms: AtomicU64::new(now_ms),
            eviction_ms: AtomicU64::new(0),
            service_up_ms: AtomicU64::new(0),
            established: AtomicBool::new(false),
            netflix_expiry,
            wire_bytes: 0,
        }
    }

    /// The lease, its instance taking at most `wire_bytes` in a registry document.
    pub(crate) fn sized(mut self, wire_bytes: usize) -> Self {
        self.wire_bytes = wire_bytes;
        self
    }

    /// The current instance data.
    pub(crate) fn load(&self) -> Arc<InstanceInfo> {
        self.instance.load_full()
    }

    fn duration_ms(&self) -> u64 {
        u64::from(self.duration_secs) * 1000
    }

    /// Records a heartbeat. In Netflix-compatible mode this reproduces `Lease.renew()`, which
    /// adds the duration once more, so a renewed lease expires two durations after it.
    pub(crate) fn renew(&self, now_ms: u64) {
        let stamp = if self.netflix_expiry {
            now_ms.saturating_add(self.duration_ms())
        } else {
            now_ms
        };
        self.last_update_ms.store(stamp, Ordering::Relaxed);
    }

    /// The stamp Eureka reports as `lastRenewalTimestamp`.
    pub(crate) fn last_update_ms(&self) -> u64 {
        self.last_update_ms.load(Ordering::Relaxed)
    }

    /// Replaces the stored instance with `make` of it, unless the lease was cancelled. A change
    /// made of a copy that another change replaced meanwhile is made again of the newer one, so
    /// no change is lost and none undoes a cancellation. Returns what it stored.
    pub(crate) fn change(
        &self,
        mut make: impl FnMut(&InstanceInfo) -> InstanceInfo,
    ) -> Option<Arc<InstanceInfo>> {
        let mut seen = self.load();
        loop {
            if seen.action_type == Some(ActionType::Deleted) {
                return None;
            }
            let changed = Arc::new(make(&seen));
            let found = self.instance.compare_and_swap(&seen, changed.clone());
            if Arc::ptr_eq(&found, &seen) {
                return Some(changed);
            }
            seen = Arc::clone(&found);
        }
    }

    /// Cancels the lease at `now_ms`: it reads as expired from then on, and its instance becomes
    /// a `DELETED` record stamped `now_ms`, which is returned.
    pub(crate) fn cancel(&self, now_ms: u64) -> Arc<InstanceInfo> {
        self.eviction_ms.store(now_ms, Ordering::Relaxed);
        let mut gone = InstanceInfo::clone(&self.load());
        record::set_action(&mut gone, ActionType::Deleted);
        record::set_last_updated(&mut gone, now_ms);
        let gone = Arc::new(gone);
        self.instance.store(gone.clone());
        gone
    }

    /// When the lease was cancelled or evicted, 0 while alive.
    pub(crate) fn eviction_ms(&self) -> u64 {
        self.eviction_ms.load(Ordering::Relaxed)
    }

    /// Records the first time the instance was seen UP.
    pub(crate) fn service_up(&self, now_ms: u64) {
        let _ =
            self.service_up_ms
                .compare_exchange(0, now_ms, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Marks the lease established if a renewal at `now_ms` proves its client alive: renewed at
    /// least `interval_ms` after it was registered. True only for the renewal that does it.
    pub(crate) fn establish(&self, now_ms: u64, interval_ms: u64) -> bool {
        now_ms >= self.registration_ms.saturating_add(interval_ms)
            && self
                .established
                .compare_exchange(false, true, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// Whether the lease is established: its client renewed it at least one expected renewal
    /// interval after registering (or the lease it replaced was).
    pub(crate) fn is_established(&self) -> bool {
        self.established.load(Ordering::Relaxed)
    }

    /// Carries over the state of the lease this one replaces: when the instance first came UP,
    /// and whether the lease was established.
    pub(crate) fn inherit(&self, previous: &Lease) {
        self.service_up_ms
            .store(previous.service_up_ms(), Ordering::Relaxed);
        self.established
            .store(previous.is_established(), Ordering::Relaxed);
    }

    /// When the instance first came UP, 0 if never.
    pub(crate) fn service_up_ms(&self) -> u64 {
        self.service_up_ms.load(Ordering::Relaxed)
    }

    /// Eureka's `isExpired(additionalLeaseMs)`.
    pub(crate) fn is_expired(&self, now_ms: u64, extra_ms: u64) -> bool {
        self.eviction_ms() > 0
            || now_ms
                > self
                    .last_update_ms()
                    .saturating_add(self.duration_ms())
                    .saturating_add(extra_ms)
    }
}
