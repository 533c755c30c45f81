//! The registry: leases by application and id, Eureka's register / renew / cancel / status
//! algorithms, eviction and self-preservation.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use rand::seq::SliceRandom;

use crate::batch::ReplicationItem;
use crate::cache::{CacheKey, Payload, ResponseCache};
use crate::config::ServerConfig;
use crate::delta::DeltaQueue;
use crate::lease::{AppTable, Lease};
use crate::rate::MeasuredRate;
use crate::record;
use crate::render;
use crate::replicator::Replicator;
use crate::rules::resolve_status;
use feign_core::clock::Clock;
use feign_eureka::model::{ActionType, InstanceInfo, InstanceStatus};

#[derive(Debug, Default)]
struct Tables {
    apps: AppTable,
    /// How many leases `apps` holds, and what their instances take in a registry document.
    count: usize,
    bytes: usize,
    /// Administrative status overrides, by application and then instance id: an override set
    /// through one application never reaches another's instance of the same id.
    overrides: HashMap<String, HashMap<String, InstanceStatus>>,
}

impl Tables {
    fn override_of(&self, app: &str, id: &str) -> Option<InstanceStatus> {
        self.overrides.get(app)?.get(id).copied()
    }

    fn has_override(&self, app: &str, id: &str) -> bool {
        self.override_of(app, id).is_some()
    }

    fn set_override(&mut self, app: &str, id: &str, status: InstanceStatus) {
        self.overrides
            .entry(app.to_owned())
            .or_default()
            .insert(id.to_owned(), status);
    }

    /// Sets the override unless one is already there.
    fn keep_or_set_override(&mut self, app: &str, id: &str, status: InstanceStatus) {
        if !self.has_override(app, id) {
            self.set_override(app, id, status);
        }
    }

    fn remove_override(&mut self, app: &str, id: &str) -> Option<InstanceStatus> {
        let of_app = self.overrides.get_mut(app)?;
        let removed = of_app.remove(id);
        if of_app.is_empty() {
            self.overrides.remove(app);
        }
        removed
    }
}

/// Self-preservation bookkeeping (`expectedNumberOfClientsSendingRenews` and the threshold).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expectation {
    pub(crate) expected_clients: u32,
    pub(crate) renews_threshold: u32,
}

/// Why a registration was not stored: a bound of the registry's size, each answered 413.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    /// The instance alone is larger than an instance may be.
    #[error(
        "the instance takes {bytes} bytes in a registry document, more than the limit of \
         {limit} bytes an instance may take (max_instance_bytes)"
    )]
    InstanceTooLarge { bytes: usize, limit: usize },
    /// The registry's instances would take more than they may together.
    #[error(
        "the registry's instances would take {bytes} bytes in a registry document with this \
         one, more than their limit of {limit} bytes (max_registry_bytes), which keeps the \
         registry readable by every client"
    )]
    RegistryFull { bytes: usize, limit: usize },
    /// The registry holds as many instances as it may.
    #[error("the registry holds its limit of {limit} instances (max_instances)")]
    TooManyInstances { limit: usize },
}

/// What a heartbeat resolved to.
#[derive(Debug)]
pub(crate) enum RenewOutcome {
    /// 200.
    Renewed,
    /// 404: unknown lease, status resolved to UNKNOWN, or the caller holds newer data.
    NotFound,
    /// 409 (replication only): the caller's copy is older than this one.
    Conflict(Box<InstanceInfo>),
}

/// The in-memory registry shared by the HTTP handlers and the background tasks.
#[derive(Debug)]
pub(crate) struct Registry {
    pub(crate) config: Arc<ServerConfig>,
    pub(crate) clock: Clock,
    tables: RwLock<Tables>,
    delta: DeltaQueue,
    delta_version: AtomicU64,
    renews: MeasuredRate,
    expectation: Mutex<Expectation>,
    cache: ResponseCache,
    replicator: Replicator,
    /// The count of recorded changes, published after each one so watches wake.
    changes: tokio::sync::watch::Sender<u64>,
}

impl Registry {
    /// An empty registry.
    pub(crate) fn new(config: Arc<ServerConfig>, clock: Clock, replicator: Replicator) -> Self {
        let expected = config.expected_clients;
        let cache = ResponseCache::new(
            config.read_only_cache,
            u64::try_from(config.cache_expiry.as_millis()).unwrap_or(u64::MAX),
        );
        let registry = Self {
            tables: RwLock::new(Tables::default()),
            delta: DeltaQueue::bounded(config.limits.registry_bytes),
            delta_version: AtomicU64::new(0),
            renews: MeasuredRate::default(),
            expectation: Mutex::new(Expectation {
                expected_clients: expected,
                renews_threshold: 0,
            }),
            cache,
            replicator,
            changes: tokio::sync::watch::Sender::new(0),
            config,
            clock,
        };
        registry.with_expectation(|_| {});
        registry
    }

    fn read(&self) -> RwLockReadGuard<'_, Tables> {
        self.tables.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Tables> {
        self.tables.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies `change` to the expectation and recomputes the threshold (§5.3 arithmetic).
    fn with_expectation(&self, change: impl FnOnce(&mut Expectation)) {
        let mut e = self.expectation.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut e);
        let per_min = 60.0 / f64::from(self.config.expected_client_renewal_interval_secs.max(1));
        e.renews_threshold = (f64::from(e.expected_clients)
            * per_min
            * self.config.renewal_percent_threshold) as u32;
    }

    /// The current self-preservation numbers.
    pub(crate) fn expectation(&self) -> Expectation {
        *self.expectation.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Renewals counted in the last complete minute.
    pub(crate) fn renews_last_min(&self) -> u64 {
        self.renews.last()
    }

    /// Eureka's `isLeaseExpirationEnabled`.
    pub(crate) fn lease_expiration_enabled(&self) -> bool {
        if !self.config.self_preservation {
            return true;
        }
        let threshold = self.expectation().renews_threshold;
        threshold > 0 && self.renews.last() > u64::from(threshold)
    }

    fn cache_keys(info: &InstanceInfo) -> Vec<CacheKey> {
        let mut keys = vec![
            CacheKey::AllApps,
            CacheKey::Delta,
            CacheKey::App(record::app(info).to_owned()),
        ];
        keys.extend(record::vips(info).map(|v| CacheKey::Vip(v.to_owned())));
        keys.extend(record::secure_vips(info).map(|v| CacheKey::Svip(v.to_owned())));
        keys
    }

    fn clamp_secs(&self, secs: u32, default: u32) -> u32 {
        let secs = if secs == 0 { default } else { secs };
        let limits = &self.config.limits;
        secs.clamp(
            limits.lease_min_secs,
            limits.lease_max_secs.max(limits.lease_min_secs),
        )
    }

    /// Registers (or re-registers) `info`; Eureka's `register` (§5.1), within the registry's
    /// bounds: an instance larger than an instance may be, one that would take the registry past
    /// its bytes, or a new one past its count is refused and nothing changes.
    pub(crate) fn register(&self, info: InstanceInfo, is_replication: bool) -> Result<(), Refused> {
        let limits = &self.config.limits;
        let mut bytes = render::wire_bytes(&info);
        if bytes > limits.instance_bytes {
            return Err(Refused::InstanceTooLarge {
                bytes,
                limit: limits.instance_bytes,
            });
        }
        let now = self.clock.now_ms();
        let app = record::app(&info).to_owned();
        let id = record::id(&info);
        let (interval, duration) = record::lease_secs(&info);
        let interval = self.clamp_secs(interval, 30);
        let duration = self.clamp_secs(duration, 90);
        let mut invalidate = Self::cache_keys(&info);
        let replicated = (!is_replication).then(|| ReplicationItem::register(&info));
        {
            let mut tables = self.write();
            let existing = tables.apps.get(&app).and_then(|m| m.get(&id)).cloned();
            let mut registrant = info;
            if let Some(existing) = &existing {
                let stored = existing.load();
                invalidate.extend(Self::cache_keys(&stored));
                let skew = limits.max_clock_skew_ms;
                if record::holds_against(&stored, record::ldt(&registrant), now, skew) {
                    registrant = InstanceInfo::clone(&stored);
                    bytes = existing.wire_bytes;
                }
            }
            let new_client = existing.is_none();
            let held = existing.as_ref().map_or(0, |l| l.wire_bytes);
            let total = tables.bytes - held + bytes;
            if total > limits.registry_bytes && bytes > held {
                return Err(Refused::RegistryFull {
                    bytes: total,
                    limit: limits.registry_bytes,
                });
            }
            if new_client && tables.count >= limits.instances {
                return Err(Refused::TooManyInstances {
                    limit: limits.instances,
                });
            }
            tables.bytes = total;
            tables.count += usize::from(new_client);
            let own = record::overridden(&registrant);
            if own != InstanceStatus::Unknown {
                tables.keep_or_set_override(&app, &id, own);
            }
            let admin = tables.override_of(&app, &id);
            if let Some(admin) = admin {
                record::set_overridden(&mut registrant, admin);
            }
            let existing_status = existing.as_ref().map(|l| record::status(&l.load()));
            let status = resolve_status(
                record::status(&registrant),
                admin,
                existing_status,
                is_replication,
            );
            record::set_status(&mut registrant, status);
            record::set_action(&mut registrant, ActionType::Added);
            record::set_last_updated(&mut registrant, now);
            let lease = Lease::new(
                registrant,
                interval,
                duration,
                now,
                self.config.netflix_expiry,
            )
            .sized(bytes);
            if let Some(existing) = &existing {
                lease.inherit(existing);
            }
            if status == InstanceStatus::Up {
                lease.service_up(now);
            }
            let lease = Arc::new(lease);
            tables
                .apps
                .entry(app)
                .or_default()
                .insert(id, lease.clone());
            self.delta.push(now, lease);
        }
        self.cache.invalidate(&invalidate);
        self.changed();
        if let Some(item) = replicated {
            self.replicator.send(item);
        }
        Ok(())
    }

    fn lease(&self, app: &str, id: &str) -> Option<Arc<Lease>> {
        self.read().apps.get(app).and_then(|m| m.get(id)).cloned()
    }

    /// A heartbeat with Eureka's `lastDirtyTimestamp` rules (§2.2).
    pub(crate) fn renew(
        &self,
        app: &str,
        id: &str,
        ldt: Option<u64>,
        overridden: Option<InstanceStatus>,
        is_replication: bool,
    ) -> RenewOutcome {
        let Some(lease) = self.lease(app, id) else {
            return RenewOutcome::NotFound;
        };
        let stored = lease.load();
        let admin = self.read().override_of(app, id);
        let own = record::status(&stored);
        let status = resolve_status(own, admin, Some(own), is_replication);
        if status == InstanceStatus::Unknown {
            return RenewOutcome::NotFound;
        }
        if status != own {
            // Made of the latest copy, and not at all once cancelled: never a revival.
            lease.change(|current| {
                let mut changed = InstanceInfo::clone(current);
                record::set_status(&mut changed, status);
                changed
            });
        }
        self.renews.increment();
        let now = self.clock.now_ms();
        lease.renew(now);
        let interval_ms = u64::from(self.config.expected_client_renewal_interval_secs) * 1000;
        if lease.establish(now, interval_ms) {
            self.with_expectation(|e| {
                if e.expected_clients > 0 {
                    e.expected_clients += 1;
                }
            });
        }
        if !is_replication {
            self.replicator
                .send(ReplicationItem::heartbeat(&lease.load(), admin));
        }
        let stored_ldt = record::ldt(&stored);
        match ldt {
            Some(ldt) if ldt > stored_ldt => {
                if is_replication {
                    if let Some(o) = overridden.filter(|o| *o != InstanceStatus::Unknown) {
                        self.write().keep_or_set_override(app, id, o);
                    }
                }
                RenewOutcome::NotFound
            }
            Some(ldt) if ldt < stored_ldt && is_replication => {
                RenewOutcome::Conflict(Box::new(self.render(&lease)))
            }
            _ => RenewOutcome::Renewed,
        }
    }

    /// Removes a lease; Eureka's `cancel`. False when there was none.
    pub(crate) fn cancel(&self, app: &str, id: &str, is_replication: bool) -> bool {
        let now = self.clock.now_ms();
        let removed = {
            let mut tables = self.write();
            let removed = tables.apps.get_mut(app).and_then(|m| m.remove(id));
            if tables.apps.get(app).is_some_and(|m| m.is_empty()) {
                tables.apps.remove(app);
            }
            tables.remove_override(app, id);
            let Some(lease) = removed else {
                return false;
            };
            tables.count -= 1;
            tables.bytes -= lease.wire_bytes;
            let gone = self.delta.cancel(now, &lease);
            (Self::cache_keys(&gone), lease.is_established())
        };
        let (removed, established) = removed;
        if established {
            self.with_expectation(|e| e.expected_clients = e.expected_clients.saturating_sub(1));
        }
        self.cache.invalidate(&removed);
        self.changed();
        if !is_replication {
            self.replicator.send(ReplicationItem::cancel(app, id));
        }
        true
    }

    /// A live lease, or `None` when unknown or lapsed ([`Registry::lapsed`]).
    fn live_lease(&self, app: &str, id: &str) -> Option<Arc<Lease>> {
        self.lease(app, id).filter(|lease| !self.lapsed(lease))
    }

    /// Whether `lease` has expired and may go: always when it never proved its client alive
    /// ([`Lease::is_established`]), else when eviction is enabled (self-preservation).
    fn lapsed(&self, lease: &Lease) -> bool {
        lease.is_expired(self.clock.now_ms(), 0)
            && (!lease.is_established() || self.lease_expiration_enabled())
    }

    /// Sets an administrative status override (§2.4). False when unknown or expired.
    pub(crate) fn update_status(
        &self,
        app: &str,
        id: &str,
        status: InstanceStatus,
        ldt: Option<u64>,
        is_replication: bool,
    ) -> bool {
        self.admin_change(
            app,
            id,
            is_replication,
            |lease, now| {
                let stored = lease.load();
                if record::status(&stored) != status {
                    if status == InstanceStatus::Up {
                        lease.service_up(now);
                    }
                    self.write().set_override(app, id, status);
                    let change = |changed: &mut InstanceInfo| {
                        record::set_overridden(changed, status);
                        record::set_status(changed, status);
                    };
                    self.modified(lease, change, ldt, now);
                }
            },
            |info| ReplicationItem::status_update(info, status, ldt),
        )
    }

    /// Removes an administrative override (§2.5); the status becomes `status`.
    pub(crate) fn delete_status_override(
        &self,
        app: &str,
        id: &str,
        status: InstanceStatus,
        ldt: Option<u64>,
        is_replication: bool,
    ) -> bool {
        self.admin_change(
            app,
            id,
            is_replication,
            |lease, now| {
                if self.write().remove_override(app, id).is_some() {
                    let change = |changed: &mut InstanceInfo| {
                        record::set_overridden(changed, InstanceStatus::Unknown);
                        record::set_status(changed, status);
                    };
                    self.modified(lease, change, ldt, now);
                }
            },
            |info| ReplicationItem::delete_override(info, status, ldt),
        )
    }

    /// The shape every administrative status change shares: find the live lease (false when
    /// unknown or expired), count the request as a renewal, apply `change`, and replicate the
    /// result unless it came from a peer.
    fn admin_change(
        &self,
        app: &str,
        id: &str,
        is_replication: bool,
        change: impl FnOnce(&Arc<Lease>, u64),
        replication: impl FnOnce(&InstanceInfo) -> ReplicationItem,
    ) -> bool {
        let Some(lease) = self.live_lease(app, id) else {
            return false;
        };
        let now = self.clock.now_ms();
        lease.renew(now);
        change(&lease, now);
        if !is_replication {
            self.replicator.send(replication(&lease.load()));
        }
        true
    }

    /// Stores `change` of the lease's instance as a modification, with its delta entry; nothing
    /// once the lease is cancelled.
    fn modified(
        &self,
        lease: &Arc<Lease>,
        change: impl Fn(&mut InstanceInfo),
        ldt: Option<u64>,
        now: u64,
    ) {
        let stored = self.delta.change(now, lease, |current| {
            let mut changed = InstanceInfo::clone(current);
            change(&mut changed);
            if let Some(ldt) = ldt.filter(|t| *t > record::ldt(&changed)) {
                record::set_ldt(&mut changed, ldt);
            }
            record::set_action(&mut changed, ActionType::Modified);
            record::set_last_updated(&mut changed, now);
            changed
        });
        if let Some(stored) = stored {
            self.cache.invalidate(&Self::cache_keys(&stored));
            self.changed();
        }
    }

    /// Merges metadata into a stored instance and re-registers it (§2.6): `Ok(false)` when
    /// unknown or expired, refused when the instance would grow past a bound.
    pub(crate) fn update_metadata(
        &self,
        app: &str,
        id: &str,
        pairs: &[(String, String)],
    ) -> Result<bool, Refused> {
        let Some(lease) = self.live_lease(app, id) else {
            return Ok(false);
        };
        let mut changed = InstanceInfo::clone(&lease.load());
        record::merge_metadata(&mut changed, pairs);
        self.register(changed, false).map(|()| true)
    }

    /// The instance decorated with its lease, as every read shows it.
    pub(crate) fn render(&self, lease: &Lease) -> InstanceInfo {
        render::decorate(lease)
    }

    /// `GET apps/{APP}/{ID}`: hidden once expired (when expiration is enabled).
    pub(crate) fn instance(&self, app: &str, id: &str) -> Option<InstanceInfo> {
        self.live_lease(app, id).map(|l| self.render(&l))
    }

    /// `GET instances/{ID}`.
    pub(crate) fn instance_by_id(&self, id: &str) -> Option<InstanceInfo> {
        let lease = self.read().apps.values().find_map(|m| m.get(id).cloned())?;
        (!self.lapsed(&lease)).then(|| self.render(&lease))
    }

    /// A stored lease's current instance without decoration (replication uses it).
    pub(crate) fn stored(&self, app: &str, id: &str) -> Option<Arc<InstanceInfo>> {
        self.lease(app, id).map(|l| l.load())
    }

    /// The cached payload for `key` if the cache holds it now (nothing is rendered).
    pub(crate) fn cached_payload(&self, key: &CacheKey) -> Option<Arc<Payload>> {
        self.cache.peek(key, self.clock.now_ms())
    }

    /// The cached payload for `key`, rendered if the cache does not hold it (a heavy job).
    pub(crate) fn payload(&self, key: &CacheKey) -> Arc<Payload> {
        let now = self.clock.now_ms();
        self.cache.get(key, now, || self.load_payload(key))
    }

    fn load_payload(&self, key: &CacheKey) -> Payload {
        let now = self.clock.now_ms();
        let tables = self.read();
        match key {
            CacheKey::AllApps => render::applications(&tables.apps, now),
            CacheKey::Delta => {
                let version = self.delta_version.fetch_add(1, Ordering::Relaxed) + 1;
                render::delta(&tables.apps, &self.delta.leases(), version, now)
            }
            CacheKey::App(name) => render::application(name, tables.apps.get(name), now),
            CacheKey::Vip(vip) => {
                render::vip(&tables.apps, |i| record::vips(i).any(|v| v == vip), now)
            }
            CacheKey::Svip(vip) => render::vip(
                &tables.apps,
                |i| record::secure_vips(i).any(|v| v == vip),
                now,
            ),
        }
    }

    /// Calls `f` with the application table under a read lock (dashboard, tests).
    pub(crate) fn with_apps<T>(&self, f: impl FnOnce(&AppTable) -> T) -> T {
        f(&self.read().apps)
    }

    /// Number of registered instances.
    pub(crate) fn size(&self) -> usize {
        self.read().count
    }

    /// One eviction run (§5.2); `extra_ms` compensates a late timer.
    ///
    /// Eureka's rule holds for leases that proved their clients alive (established): while
    /// self-preservation is engaged none of them goes, else at most the share of the registry
    /// the renewal threshold leaves (15 % by default), picked at random. An expired lease that
    /// never proved its client alive goes in every run: a burst of registrations that never
    /// renew, or renew for less than an expected renewal interval, neither counts toward the
    /// renewals expected nor holds eviction back.
    pub(crate) fn evict(&self, extra_ms: u64) -> usize {
        let enabled = self.lease_expiration_enabled();
        let now = self.clock.now_ms();
        let (mut established, unproven, size) = {
            let tables = self.read();
            let (mut established, mut unproven) = (Vec::new(), Vec::new());
            for (app, leases) in &tables.apps {
                for (id, lease) in leases {
                    if lease.is_expired(now, extra_ms) {
                        let name = (app.clone(), id.clone());
                        if lease.is_established() {
                            established.push(name);
                        } else {
                            unproven.push(name);
                        }
                    }
                }
            }
            (established, unproven, tables.count)
        };
        if enabled {
            let keep = (size as f64 * self.config.renewal_percent_threshold) as usize;
            let limit = size.saturating_sub(keep).min(established.len());
            established.shuffle(&mut rand::rng());
            established.truncate(limit);
        } else {
            established.clear();
        }
        let mut evicted = 0;
        for (app, id) in unproven.iter().chain(&established) {
            if self.cancel(app, id, true) {
                tracing::info!(app = %app, id = %id, "evicted expired lease");
                evicted += 1;
            }
        }
        evicted
    }

    /// The peer fan-out.
    pub(crate) fn replicator(&self) -> &Replicator {
        &self.replicator
    }

    /// Closes the renewals-per-minute bucket.
    pub(crate) fn roll_renewals(&self) {
        self.renews.roll();
    }

    /// The 15-minute threshold update: trusts the local count of established leases unless it
    /// dropped sharply.
    pub(crate) fn update_threshold(&self) {
        let established = self.with_apps(|apps| {
            apps.values()
                .flat_map(|leases| leases.values())
                .filter(|lease| lease.is_established())
                .count()
        });
        let count = u32::try_from(established).unwrap_or(u32::MAX);
        if count == 0 {
            return;
        }
        let self_preservation = self.config.self_preservation;
        let pct = self.config.renewal_percent_threshold;
        self.with_expectation(|e| {
            if f64::from(count) > pct * f64::from(e.expected_clients) || !self_preservation {
                e.expected_clients = count;
            }
        });
    }

    /// About the bytes the delta queue's instances hold.
    pub(crate) fn delta_bytes(&self) -> usize {
        self.delta.held_bytes()
    }

    /// How many changes the delta queue has recorded: the dashboard's pages are kept until it
    /// moves.
    pub(crate) fn delta_changes(&self) -> u64 {
        self.delta.recorded()
    }

    /// Publishes the count of recorded changes to the watches (after the caches are
    /// invalidated, so a woken watch renders the change).
    fn changed(&self) {
        self.changes.send_replace(self.delta.recorded());
    }

    /// The count of recorded changes now.
    pub(crate) fn changes_recorded(&self) -> u64 {
        self.delta.recorded()
    }

    /// The count of recorded changes, as published to watches.
    pub(crate) fn subscribe_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The delta document rendered now, past every cache, with the count of changes it holds at
    /// least.
    pub(crate) fn fresh_delta(&self) -> (u64, Payload) {
        // The count is read first: the rendering holds every change it counts, perhaps more,
        // so a watch that resumes from it never misses one.
        let count = self.delta.recorded();
        let now = self.clock.now_ms();
        let tables = self.read();
        let version = self.delta_version.fetch_add(1, Ordering::Relaxed) + 1;
        (
            count,
            render::delta(&tables.apps, &self.delta.leases(), version, now),
        )
    }

    /// How many documents the read-only cache holds.
    pub(crate) fn read_only_cached(&self) -> usize {
        self.cache.read_only_len()
    }

    /// Drops delta entries past the retention.
    pub(crate) fn expire_delta(&self) {
        let retention = u64::try_from(self.config.delta_retention.as_millis()).unwrap_or(u64::MAX);
        self.delta.expire(self.clock.now_ms(), retention);
    }

    /// The read-only cache refresh.
    pub(crate) fn refresh_cache(&self) {
        self.cache
            .refresh_read_only(self.clock.now_ms(), |key| self.load_payload(key));
    }
}
