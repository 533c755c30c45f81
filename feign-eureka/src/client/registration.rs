//! Registration: register, heartbeat, re-register on 404 and on local changes (status and
//! metadata, rate limited as Netflix's `InstanceInfoReplicator`), deregister.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use feign_core::backoff::full_jitter;
use http::Method;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use tokio::sync::{watch, Notify};
use tokio::time::{sleep_until, Instant};

use crate::model::InstanceStatus;

use super::backoff::Backoff;
use super::error::{CallError, Chain};
use super::limiter::OnDemandLimiter;
use super::throttle::{WarnThrottle, WARN_EVERY};
use super::transport::{Call, Transport};
use super::InstanceConfig;

/// Everything but RFC 3986 unreserved characters and `:` (as in Java clients' `host:app:port`
/// ids) is encoded in a path segment.
pub(crate) const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b':');

/// How local changes reach the registry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RegistrationSettings {
    /// Netflix's `instanceInfoReplicationIntervalSeconds`: sets the on-demand rate limit.
    pub(crate) replication_interval: Duration,
    /// Whether a status change re-registers at once (`onDemandUpdateStatusChange`) or waits
    /// for the next heartbeat.
    pub(crate) on_demand_status: bool,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// This instance's registration state.
pub(crate) struct Registration {
    config: InstanceConfig,
    app: String,
    id: String,
    status: Mutex<InstanceStatus>,
    /// The metadata to register: the configured map, changed at run time.
    metadata: Mutex<BTreeMap<String, String>>,
    settings: RegistrationSettings,
    /// The current `lastDirtyTimestamp`: bumped on every local change.
    last_dirty: AtomicU64,
    /// The `lastDirtyTimestamp` of the last accepted registration, echoed in heartbeats.
    registered_ldt: AtomicU64,
    registered: AtomicBool,
    dirty: AtomicBool,
    wake: Notify,
    /// Registration and heartbeat failures are warned about at most once a minute.
    warnings: WarnThrottle,
}

impl Registration {
    pub(crate) fn new(config: InstanceConfig, settings: RegistrationSettings) -> Registration {
        let app = config.app_name().to_ascii_uppercase();
        let id = config.resolved_instance_id();
        let status = config.status();
        let metadata = config.metadata_map().clone();
        Registration {
            config,
            app,
            id,
            status: Mutex::new(status),
            metadata: Mutex::new(metadata),
            settings,
            last_dirty: AtomicU64::new(now_ms()),
            registered_ldt: AtomicU64::new(0),
            registered: AtomicBool::new(false),
            dirty: AtomicBool::new(true),
            wake: Notify::new(),
            warnings: WarnThrottle::new(WARN_EVERY),
        }
    }

    pub(crate) fn app(&self) -> &str {
        &self.app
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn status(&self) -> InstanceStatus {
        *self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn is_registered(&self) -> bool {
        self.registered.load(Ordering::Acquire)
    }

    /// A new `lastDirtyTimestamp`: wall-clock ms, strictly greater than the previous one.
    fn bump_dirty(&self) -> u64 {
        let now = now_ms();
        let mut prev = self.last_dirty.load(Ordering::Acquire);
        loop {
            let next = now.max(prev + 1);
            match self
                .last_dirty
                .compare_exchange(prev, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return next,
                Err(actual) => prev = actual,
            }
        }
    }

    /// Changes the local status; the background task re-registers with a bumped timestamp
    /// (at once when status changes are sent on demand, else at the next heartbeat).
    pub(crate) fn set_status(&self, status: InstanceStatus) {
        {
            let mut current = self.status.lock().unwrap_or_else(|e| e.into_inner());
            if *current == status {
                return;
            }
            *current = status;
        }
        self.changed(self.settings.on_demand_status);
    }

    /// The metadata registered now (the configured map with the run-time changes).
    pub(crate) fn metadata(&self) -> BTreeMap<String, String> {
        self.metadata
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Applies `change` to the metadata; if it changed, re-registers on demand.
    pub(crate) fn change_metadata(&self, change: impl FnOnce(&mut BTreeMap<String, String>)) {
        let changed = {
            let mut metadata = self.metadata.lock().unwrap_or_else(|e| e.into_inner());
            let before = metadata.clone();
            change(&mut metadata);
            *metadata != before
        };
        if changed {
            self.changed(true);
        }
    }

    /// Marks the registration dirty with a newer timestamp; `on_demand` wakes the loop to send
    /// it now (within the rate limit) rather than at the next heartbeat.
    fn changed(&self, on_demand: bool) {
        self.bump_dirty();
        self.dirty.store(true, Ordering::Release);
        if on_demand {
            self.wake.notify_one();
        }
    }

    /// Logs a failed registration or heartbeat: a warning at most once a minute, debug
    /// otherwise. `status` is Eureka's answer, `error` the transport failure.
    fn failed(&self, what: &'static str, status: Option<u16>, error: Option<&CallError>) {
        let error = error.map(|e| tracing::field::display(Chain(e)));
        match self.warnings.permit() {
            Some(held_back) => {
                tracing::warn!(target: "feign_eureka", app = %self.app, id = %self.id, status, error, unlogged_failures = held_back, "{what}");
            }
            None => {
                tracing::debug!(target: "feign_eureka", app = %self.app, id = %self.id, status, error, "{what}");
            }
        }
    }

    fn path(&self) -> String {
        format!("apps/{}", utf8_percent_encode(&self.app, SEGMENT))
    }

    fn instance_path(&self) -> String {
        format!("{}/{}", self.path(), utf8_percent_encode(&self.id, SEGMENT))
    }

    /// `POST apps/{APP}` with the current data; true on success.
    pub(crate) async fn register(&self, transport: &Transport) -> bool {
        let ldt = self.last_dirty.load(Ordering::Acquire);
        let mut info = self.config.to_instance_info(self.status(), ldt);
        info.metadata = self.metadata();
        let body = Bytes::from(info.to_json());
        match transport
            .execute(
                Call::Register,
                Method::POST,
                &self.path(),
                &[],
                Some(body),
                None,
            )
            .await
        {
            Ok(answer) if answer.status == 204 || answer.status == 200 => {
                self.registered_ldt.store(ldt, Ordering::Release);
                self.registered.store(true, Ordering::Release);
                // Clear the dirty flag only if nothing changed while registering.
                if self.last_dirty.load(Ordering::Acquire) == ldt {
                    self.dirty.store(false, Ordering::Release);
                }
                tracing::info!(target: "feign_eureka", app = %self.app, id = %self.id, status = %info.status, "registered with eureka");
                true
            }
            Ok(answer) => {
                self.failed("eureka refused the registration", Some(answer.status), None);
                false
            }
            Err(e) => {
                self.failed("registration failed", None, Some(&e));
                false
            }
        }
    }

    /// One heartbeat; on 404 bumps the timestamp and re-registers at once.
    pub(crate) async fn heartbeat(&self, transport: &Transport) -> bool {
        let query = [
            ("status", self.status().as_str().to_owned()),
            (
                "lastDirtyTimestamp",
                self.registered_ldt.load(Ordering::Acquire).to_string(),
            ),
        ];
        match transport
            .execute(
                Call::Heartbeat,
                Method::PUT,
                &self.instance_path(),
                &query,
                None,
                None,
            )
            .await
        {
            Ok(answer) if answer.status == 200 => true,
            Ok(answer) if answer.status == 404 => {
                tracing::info!(target: "feign_eureka", app = %self.app, id = %self.id, "eureka does not know this instance; re-registering");
                self.bump_dirty();
                self.registered.store(false, Ordering::Release);
                self.register(transport).await
            }
            Ok(answer) => {
                self.failed("heartbeat refused", Some(answer.status), None);
                false
            }
            Err(e) => {
                self.failed("heartbeat failed", None, Some(&e));
                false
            }
        }
    }

    /// `DELETE apps/{APP}/{ID}` once, within `timeout`.
    pub(crate) async fn deregister(&self, transport: &Transport, timeout: Duration) {
        let path = self.instance_path();
        let call = transport.execute(
            Call::Cancel,
            Method::DELETE,
            &path,
            &[],
            None,
            Some(timeout),
        );
        match tokio::time::timeout(timeout, call).await {
            Ok(Ok(answer)) => {
                tracing::info!(target: "feign_eureka", app = %self.app, id = %self.id, status = answer.status, "deregistered from eureka");
            }
            Ok(Err(e)) => {
                tracing::warn!(target: "feign_eureka", app = %self.app, id = %self.id, error = %Chain(&e), "deregistration failed");
            }
            Err(_) => {
                tracing::warn!(target: "feign_eureka", app = %self.app, id = %self.id, "deregistration timed out");
            }
        }
        self.registered.store(false, Ordering::Release);
    }

    /// The registration loop: a jittered first registration, then heartbeats every renewal
    /// interval, backoff on failure, and immediate re-registration on local changes within the
    /// on-demand rate limit. A change the limit holds back is sent when the next token comes
    /// (or with the next heartbeat, if sooner), with whatever changed meanwhile: the latest
    /// state always arrives.
    pub(crate) async fn run(
        &self,
        transport: &Transport,
        jitter: Duration,
        bound: u32,
        mut stop: watch::Receiver<bool>,
    ) {
        let interval = self.config.renewal_interval();
        let mut backoff = Backoff::new(interval, bound);
        // Registered already by `start` (no jitter to wait for): a heartbeat is due next.
        let first = if self.is_registered() {
            interval
        } else {
            full_jitter(jitter)
        };
        let mut next = Instant::now() + first;
        let mut limiter = OnDemandLimiter::new(self.settings.replication_interval);
        // When the limiter lets a held-back change out.
        let mut held_until: Option<Instant> = None;
        loop {
            let wake_at = held_until.map_or(next, |held| held.min(next));
            tokio::select! {
                _ = sleep_until(wake_at) => {}
                _ = self.wake.notified() => {}
                _ = stop.changed() => return,
            };
            let now = Instant::now();
            if now < next {
                // An on-demand update. Before the first registration, or while registrations
                // fail, the scheduled run registers (it backs off).
                if !self.is_registered() || !self.dirty.load(Ordering::Acquire) {
                    held_until = None;
                    continue;
                }
                match limiter.take(now) {
                    Ok(()) => held_until = None,
                    Err(token_at) => {
                        tracing::debug!(target: "feign_eureka", app = %self.app, id = %self.id, "on-demand update held back by the rate limit");
                        held_until = Some(token_at);
                        continue;
                    }
                }
            }
            let ok = if self.dirty.load(Ordering::Acquire) || !self.is_registered() {
                self.register(transport).await
            } else {
                self.heartbeat(transport).await
            };
            let delay = if ok {
                backoff.succeeded()
            } else {
                backoff.failed()
            };
            next = Instant::now() + delay;
        }
    }
}
