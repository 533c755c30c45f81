//! Push discovery: `GET /eureka/watch?after=<version>&timeout=<ms>`, a long poll that answers
//! with the delta document as soon as the registry holds a change the caller has not seen.
//!
//! A version is `<epoch>-<count>`: this server's random epoch and the count of changes its
//! delta queue recorded. A caller holding another server's version (or none) is answered at
//! once with the whole delta queue, as a delta fetch would be; hash reconciliation on the
//! client covers anything older than the queue, as it does for deltas.
//!
//! The delta is rendered once for every watch it can answer: a watch takes the last rendering
//! whenever it holds the change the watch waits for, and only a watch that needs a newer one
//! renders, as a heavy job, one at a time, while the others wait for it without holding a
//! worker. However fast changes come and however many watch, renderings follow the changes,
//! not the watches, and the changes made while one runs share the next.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{watch, Mutex, OwnedSemaphorePermit, Semaphore};

use crate::cache::Payload;
use crate::media::Format;
use crate::offload::Offload;
use crate::registry::Registry;
use crate::validate::Invalid;

/// The header that carries a version on watch answers.
pub(crate) const VERSION_HEADER: &str = "x-feign-registry-version";
/// The header on fetches (`apps`, `apps/delta`) that tells a client the watch is offered.
pub(crate) const OFFER_HEADER: &str = "x-feign-watch";
/// The longest a watch waits, whatever it asks for.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(60);
/// The wait when the caller names none.
const DEFAULT_WAIT: Duration = Duration::from_secs(30);

/// What a watch resolved to.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Changes after the caller's version: the delta document and the new version.
    Changed(Arc<Payload>, String),
    /// No change within the wait: the caller's version still holds.
    Unchanged(String),
    /// The cap on concurrent watches is reached.
    Full,
    /// The server is shutting down.
    Closed,
}

/// The watches' shared state: the cap, this server's epoch, the shutdown signal and the last
/// rendered delta with the count of changes it holds at least.
#[derive(Debug)]
pub(crate) struct Watches {
    epoch: u64,
    cap: usize,
    permits: Arc<Semaphore>,
    closed: watch::Sender<bool>,
    rendered: Mutex<Option<(u64, Arc<Payload>)>>,
    /// How many times the delta was rendered for watches.
    renders: AtomicU64,
}

impl Watches {
    /// Watches allowing `cap` at once (zero: the watch is not offered).
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            epoch: rand::random::<u64>() >> 1,
            cap,
            permits: Arc::new(Semaphore::new(cap)),
            closed: watch::Sender::new(false),
            rendered: Mutex::new(None),
            renders: AtomicU64::new(0),
        }
    }

    /// Whether the watch is offered at all.
    pub(crate) fn offered(&self) -> bool {
        self.cap > 0
    }

    /// Ends every watch now and every later one at once (shutdown).
    pub(crate) fn close(&self) {
        self.closed.send_replace(true);
    }

    fn version(&self, count: u64) -> String {
        format!("{:x}-{count}", self.epoch)
    }

    /// The change count `after` names on this server; `None` for another server's version.
    fn own_count(&self, after: &str) -> Result<Option<u64>, Invalid> {
        let bad = || Invalid::from(format!("after {after:?} is not a registry version"));
        let (epoch, count) = after.split_once('-').ok_or_else(bad)?;
        let epoch = u64::from_str_radix(epoch, 16).map_err(|_| bad())?;
        let count: u64 = count.parse().map_err(|_| bad())?;
        Ok((epoch == self.epoch).then_some(count))
    }

    /// How many times the delta was rendered for watches.
    pub(crate) fn renders(&self) -> u64 {
        self.renders.load(Ordering::Relaxed)
    }

    /// Waits for a change after `after` (none: answer at once) for up to `wait`.
    pub(crate) async fn watch(
        &self,
        registry: &Arc<Registry>,
        offload: &Offload,
        after: Option<&str>,
        wait: Duration,
    ) -> Result<Outcome, Invalid> {
        let seen = match after {
            Some(after) => self.own_count(after)?,
            None => None,
        };
        let Ok(_permit) = self.permit() else {
            return Ok(Outcome::Full);
        };
        let mut closed = self.closed.subscribe();
        if *closed.borrow_and_update() {
            return Ok(Outcome::Closed);
        }
        let mut changes = registry.subscribe_changes();
        // The rendering must hold the change the watch waits for, or, for a caller without a
        // version of this server, every change made before it asked.
        let needed = match seen {
            Some(seen) => {
                let newer = changes.wait_for(|count| *count > seen);
                tokio::select! {
                    woke = newer => if woke.is_err() { return Ok(Outcome::Closed) },
                    _ = tokio::time::sleep(wait) => {
                        return Ok(Outcome::Unchanged(self.version(seen)));
                    }
                    _ = closed.changed() => return Ok(Outcome::Closed),
                }
                seen + 1
            }
            None => registry.changes_recorded(),
        };
        match self.rendered(registry, offload, needed).await {
            Some((count, payload)) => Ok(Outcome::Changed(payload, self.version(count))),
            None => Ok(Outcome::Closed),
        }
    }

    fn permit(&self) -> Result<OwnedSemaphorePermit, tokio::sync::TryAcquireError> {
        self.permits.clone().try_acquire_owned()
    }

    /// A rendering of the delta holding at least `needed` changes: the last one if it does,
    /// else a new one, rendered (and gzipped as JSON, the form clients watch in) as a heavy
    /// job; `None` when the runtime is shutting down.
    async fn rendered(
        &self,
        registry: &Arc<Registry>,
        offload: &Offload,
        needed: u64,
    ) -> Option<(u64, Arc<Payload>)> {
        let mut rendered = self.rendered.lock().await;
        if let Some((count, payload)) = rendered.as_ref() {
            if *count >= needed {
                return Some((*count, payload.clone()));
            }
        }
        let registry = registry.clone();
        let (count, payload) = offload
            .run(move || {
                let (count, payload) = registry.fresh_delta();
                payload.gzip(Format::Json, false);
                (count, Arc::new(payload))
            })
            .await?;
        self.renders.fetch_add(1, Ordering::Relaxed);
        *rendered = Some((count, payload.clone()));
        Some((count, payload))
    }
}

/// The wait a request asks for (`timeout` in milliseconds), within [`MAX_WAIT`].
pub(crate) fn wait(timeout: Option<&str>) -> Result<Duration, Invalid> {
    match timeout {
        None | Some("") => Ok(DEFAULT_WAIT),
        Some(raw) => raw
            .parse::<u64>()
            .map(|ms| Duration::from_millis(ms).min(MAX_WAIT))
            .map_err(|_| Invalid::from(format!("timeout {raw:?} is not a number of milliseconds"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_name_their_server() {
        let watches = Watches::new(1);
        let own = watches.version(7);
        assert_eq!(watches.own_count(&own).unwrap(), Some(7));
        let other = Watches::new(1);
        if other.epoch != watches.epoch {
            assert_eq!(watches.own_count(&other.version(7)).unwrap(), None);
        }
        assert!(watches.own_count("7").is_err());
        assert!(watches.own_count("zz-1").is_err());
        assert!(watches.own_count("1-x").is_err());
    }

    #[test]
    fn waits_are_capped() {
        assert_eq!(wait(None).unwrap(), DEFAULT_WAIT);
        assert_eq!(wait(Some("250")).unwrap(), Duration::from_millis(250));
        assert_eq!(wait(Some("99999999")).unwrap(), MAX_WAIT);
        assert!(wait(Some("-1")).is_err());
    }
}
