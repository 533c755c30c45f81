//! Discovery: full fetch, deltas with hash reconciliation, the guard against sudden mass
//! disappearance, and the fetch loop with backoff.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http::Method;
use percent_encoding::utf8_percent_encode;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

use crate::model::{Applications, ListedDocument};

use super::backoff::Backoff;
use super::error::{Chain, FetchError};
use super::registration::SEGMENT;
use super::registry::{Excluded, Snapshot};
use super::shared::Shared;
use super::throttle::{WarnThrottle, WARN_EVERY};
use super::transport::{Call, Transport};

/// An application must have had at least this many instances for a drop to be suspicious.
const GUARD_MIN_INSTANCES: usize = 3;

/// Discovery settings.
#[derive(Clone, Debug)]
pub(crate) struct DiscoveryConfig {
    pub(crate) interval: Duration,
    pub(crate) bound: u32,
    pub(crate) disable_delta: bool,
    pub(crate) drop_guard: bool,
    /// Fetch only this VIP (`GET vips/{vip}`), always in full.
    pub(crate) single_vip: Option<String>,
    /// Push discovery: how long each watch waits, when the client watches a server that
    /// offers it; `None` polls only.
    pub(crate) watch: Option<Duration>,
}

/// Fetches the registry and keeps the local copy current.
pub(crate) struct Discovery {
    shared: Arc<Shared>,
    config: DiscoveryConfig,
    /// The next fetch must be a full one.
    force_full: AtomicBool,
    /// A suspicious drop was held back once and is waiting for confirmation.
    held_drop: AtomicBool,
    /// Serializes fetches (the loop and on-demand refreshes).
    fetching: tokio::sync::Mutex<()>,
    /// Fetch failures are warned about at most once a minute.
    warnings: WarnThrottle,
    /// The last fetch's server offered the watch.
    watch_offered: AtomicBool,
}

/// What one watch came to.
enum Watched {
    /// A change applied, or none within the wait: watch again.
    Again,
    /// The server does not watch (any more), or answered too soon: poll for an interval.
    Poll,
}

impl Discovery {
    pub(crate) fn new(shared: Arc<Shared>, config: DiscoveryConfig) -> Discovery {
        Discovery {
            shared,
            config,
            force_full: AtomicBool::new(false),
            held_drop: AtomicBool::new(false),
            fetching: tokio::sync::Mutex::new(()),
            warnings: WarnThrottle::new(WARN_EVERY),
            watch_offered: AtomicBool::new(false),
        }
    }

    fn warn_rate_limited(&self, error: &FetchError) {
        let error = Chain(error);
        match self.warnings.permit() {
            Some(held_back) => {
                let stale = self
                    .shared
                    .last_fetch()
                    .map(|at| Instant::now().duration_since(at).as_secs());
                tracing::warn!(target: "feign_eureka", %error, stale_secs = ?stale, unlogged_failures = held_back, "registry fetch failed; serving the cached registry");
            }
            None => tracing::debug!(target: "feign_eureka", %error, "registry fetch failed"),
        }
    }

    fn report_excluded(excluded: &Excluded) {
        if excluded.is_empty() {
            return;
        }
        let sample: Vec<String> = excluded
            .iter()
            .take(5)
            .map(|(id, why)| format!("{id:?} ({why})"))
            .collect();
        tracing::warn!(target: "feign_eureka", count = excluded.len(), sample = %sample.join(", "), "instances with unusable registrations are not routed to");
    }

    /// One fetch, then the staleness gauge updated whether it worked or not.
    pub(crate) async fn fetch(&self, transport: &Transport) -> Result<(), FetchError> {
        let result = self.fetch_once(transport).await;
        self.shared.staleness();
        result
    }

    /// One fetch: a delta when possible (with hash reconciliation), else a full fetch.
    async fn fetch_once(&self, transport: &Transport) -> Result<(), FetchError> {
        let _guard = self.fetching.lock().await;
        let current = self.shared.snapshot();
        let full = self.config.disable_delta
            || self.config.single_vip.is_some()
            || !current.fetched
            || current.is_empty()
            || self.force_full.swap(false, Ordering::AcqRel);
        if full {
            return self.fetch_full(transport, &current).await;
        }
        let answer = transport
            .execute(Call::FetchDelta, Method::GET, "apps/delta", &[], None, None)
            .await?;
        if answer.status != 200 {
            tracing::debug!(target: "feign_eureka", status = answer.status, "delta refused; fetching the full registry");
            return self.fetch_full(transport, &current).await;
        }
        self.watch_offered
            .store(answer.watch_offered, Ordering::Release);
        self.apply_delta(transport, &current, &answer.body).await
    }

    /// Applies a delta document to `current`, reconciling with the server's hash (a full fetch
    /// when they differ).
    async fn apply_delta(
        &self,
        transport: &Transport,
        current: &Snapshot,
        body: &[u8],
    ) -> Result<(), FetchError> {
        let delta = match Applications::from_json(body) {
            Ok(delta) => delta,
            Err(e) => {
                tracing::warn!(target: "feign_eureka", error = %e, "unreadable delta; fetching the full registry");
                return self.fetch_full(transport, current).await;
            }
        };
        let server_hash = delta.apps_hashcode.clone();
        let changed = delta.instance_count() > 0;
        let (next, excluded) = current.apply_delta(delta, &self.shared.policy);
        Self::report_excluded(&excluded);
        if next.hash_code() != server_hash {
            tracing::info!(target: "feign_eureka", local = %next.hash_code(), server = %server_hash, "registry hash mismatch; fetching the full registry");
            let result = self.fetch_full(transport, current).await;
            if result.is_err() && changed {
                self.shared.publish(next);
                self.force_full.store(true, Ordering::Release);
            }
            return result;
        }
        if changed {
            self.shared.publish(next);
        }
        self.shared.fetched();
        Ok(())
    }

    /// One watch (push discovery): waits up to `wait` for a change after `version` and applies
    /// it as a delta; `version` becomes the server's answer.
    async fn watch_once(
        &self,
        transport: &Transport,
        wait: Duration,
        version: &mut Option<String>,
    ) -> Result<Watched, FetchError> {
        let started = Instant::now();
        let mut query = vec![("timeout", wait.as_millis().to_string())];
        if let Some(after) = version.as_ref() {
            query.push(("after", after.clone()));
        }
        let answer = transport
            .execute(Call::Watch, Method::GET, "watch", &query, None, None)
            .await?;
        let result = match (answer.status, answer.version) {
            (200, Some(next)) => {
                let _guard = self.fetching.lock().await;
                let current = self.shared.snapshot();
                let applied = if current.fetched {
                    self.apply_delta(transport, &current, &answer.body).await
                } else {
                    self.fetch_full(transport, &current).await
                };
                applied.map(|()| {
                    *version = Some(next);
                    Watched::Again
                })
            }
            // No change within the wait; one that came back much sooner is not a watch.
            (204, Some(next)) if started.elapsed() >= wait / 2 => {
                self.shared.fetched();
                *version = Some(next);
                Ok(Watched::Again)
            }
            (status, _) => {
                tracing::debug!(target: "feign_eureka", status, "watch not answered; polling");
                self.watch_offered.store(false, Ordering::Release);
                Ok(Watched::Poll)
            }
        };
        self.shared.staleness();
        result
    }

    async fn fetch_full(
        &self,
        transport: &Transport,
        current: &Snapshot,
    ) -> Result<(), FetchError> {
        let path = match &self.config.single_vip {
            Some(vip) => format!("vips/{}", utf8_percent_encode(vip, SEGMENT)),
            None => "apps/".to_owned(),
        };
        let answer = transport
            .execute(Call::FetchFull, Method::GET, &path, &[], None, None)
            .await?;
        self.watch_offered
            .store(answer.watch_offered, Ordering::Release);
        let document = ListedDocument::read(&answer.body).map_err(FetchError::Unreadable)?;
        if document.listing.skipped > 0 {
            tracing::warn!(target: "feign_eureka", skipped = document.listing.skipped, "unreadable applications skipped");
        }
        let (next, excluded) = Snapshot::from_listing(document, current, &self.shared.policy);
        Self::report_excluded(&excluded);
        if self.config.drop_guard && current.fetched {
            if let Some(app) = suspicious_drop(current, &next) {
                if !self.held_drop.swap(true, Ordering::AcqRel) {
                    tracing::warn!(target: "feign_eureka", app = %app, "more than half of an application's instances vanished at once; keeping the cached registry until the next fetch confirms it");
                    self.force_full.store(true, Ordering::Release);
                    self.shared.fetched();
                    return Ok(());
                }
            }
        }
        self.held_drop.store(false, Ordering::Release);
        self.shared.publish(next);
        self.shared.fetched();
        Ok(())
    }

    /// Publishes a backup listing in place of a registry that was never fetched; the first
    /// successful fetch replaces it (the snapshot is not marked fetched, so that fetch is a full
    /// one and the mass-disappearance guard does not hold it back). Returns the instance count.
    pub(crate) fn serve_backup(&self, listing: Applications) -> usize {
        let (mut snapshot, excluded) =
            Snapshot::from_full(listing, &Snapshot::default(), &self.shared.policy);
        Self::report_excluded(&excluded);
        snapshot.fetched = false;
        let count = snapshot.instance_count();
        self.shared.publish(snapshot);
        count
    }

    /// The fetch loop: every interval, backing off ×2 (with jitter) up to `bound` × the
    /// interval while fetches fail. With push discovery on, while the server offers the watch
    /// the loop watches instead, one long poll after another, and polls again when it does not.
    pub(crate) async fn run(&self, transport: &Transport, mut stop: watch::Receiver<bool>) {
        let mut backoff = Backoff::new(self.config.interval, self.config.bound);
        let mut next = Instant::now() + self.config.interval;
        let mut version = None;
        loop {
            let wait = self
                .config
                .watch
                .filter(|_| self.watch_offered.load(Ordering::Acquire));
            if let Some(wait) = wait {
                let watched = tokio::select! {
                    watched = self.watch_once(transport, wait, &mut version) => watched,
                    _ = stop.changed() => return,
                };
                match watched {
                    Ok(Watched::Again) => {
                        backoff.succeeded();
                        continue;
                    }
                    Ok(Watched::Poll) => next = Instant::now() + self.config.interval,
                    Err(e) => {
                        self.warn_rate_limited(&e);
                        self.watch_offered.store(false, Ordering::Release);
                        next = Instant::now() + backoff.failed();
                    }
                }
            }
            tokio::select! {
                _ = sleep_until(next) => {}
                _ = stop.changed() => return,
            }
            let delay = match self.fetch(transport).await {
                Ok(()) => backoff.succeeded(),
                Err(e) => {
                    self.warn_rate_limited(&e);
                    backoff.failed()
                }
            };
            next = Instant::now() + delay;
        }
    }
}

/// An application that had at least [`GUARD_MIN_INSTANCES`] instances and lost more than half
/// of them between `old` and `new`.
fn suspicious_drop(old: &Snapshot, new: &Snapshot) -> Option<String> {
    let new_sizes = new.app_sizes();
    old.app_sizes().into_iter().find_map(|(app, before)| {
        let after = new_sizes.get(app).copied().unwrap_or(0);
        (before >= GUARD_MIN_INSTANCES && after * 2 < before).then(|| app.to_owned())
    })
}
