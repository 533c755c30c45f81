//! Push discovery: `GET /eureka/watch?after=<version>&timeout=<ms>`, a long poll that answers
//! with the delta document as soon as the registry holds a change the caller has not seen.
//!
//! A version is `<epoch>-<count>`: this server's random epoch and the count of changes its
//! delta queue recorded. A caller holding another server's version (or none) is answered at
//! once with the whole delta queue, as a delta fetch would be; hash reconciliation on the
//! client covers anything older than the queue, as it does for deltas.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};

use crate::cache::Payload;
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
/// rendered delta (every watch woken by one change shares one rendering).
#[derive(Debug)]
pub(crate) struct Watches {
    epoch: u64,
    cap: usize,
    permits: Arc<Semaphore>,
    closed: watch::Sender<bool>,
    rendered: Mutex<Option<(u64, Arc<Payload>)>>,
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

    /// Waits for a change after `after` (none: answer at once) for up to `wait`.
    pub(crate) async fn watch(
        &self,
        registry: &Registry,
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
        if let Some(seen) = seen {
            let newer = changes.wait_for(|count| *count > seen);
            tokio::select! {
                woke = newer => if woke.is_err() { return Ok(Outcome::Closed) },
                _ = tokio::time::sleep(wait) => return Ok(Outcome::Unchanged(self.version(seen))),
                _ = closed.changed() => return Ok(Outcome::Closed),
            }
        }
        let (count, payload) = self.render(registry);
        Ok(Outcome::Changed(payload, self.version(count)))
    }

    fn permit(&self) -> Result<OwnedSemaphorePermit, tokio::sync::TryAcquireError> {
        self.permits.clone().try_acquire_owned()
    }

    /// The delta as of now, rendered once for all the watches that ask after one change.
    fn render(&self, registry: &Registry) -> (u64, Arc<Payload>) {
        let current = registry.changes_recorded();
        let mut rendered = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((count, payload)) = rendered.as_ref() {
            if *count == current {
                return (*count, payload.clone());
            }
        }
        let (count, payload) = registry.fresh_delta();
        let payload = Arc::new(payload);
        *rendered = Some((count, payload.clone()));
        (count, payload)
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
