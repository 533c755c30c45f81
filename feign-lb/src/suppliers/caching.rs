//! A cache in front of a slower supplier (Spring's `CachingServiceInstanceListSupplier`), that
//! keeps the last good list when a refresh fails or comes back empty, and passes the source's
//! changes through as they happen.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::versioned::Versioned;
use crate::{InstanceSupplier, Instances};

/// Caches each service's list, and keeps the last good one: a refresh that fails (the source
/// knows nothing of the service) or returns an empty list keeps it.
///
/// A change of the source passes through at once: a read after the source's
/// [`version`](InstanceSupplier::version) moved reads it again, and inside a tokio runtime a
/// background task refreshes the cached services as soon as the source's
/// [`changed`](InstanceSupplier::changed) fires, so balancers over the cache hear of it at
/// once. In front of a source that pushes its changes (feign-eureka's supplier with the
/// watch, a `StaticSupplier`), the TTL (35 s by default, Spring's) adds no staleness; it
/// bounds how old the list gets from a source whose version never moves, refreshed every TTL
/// in the background, or on a read of an expired entry outside a runtime.
#[derive(Clone)]
pub struct CachingSupplier {
    inner: Arc<Inner>,
}

struct Inner {
    source: Arc<dyn InstanceSupplier>,
    ttl: Duration,
    entries: Versioned<Vec<Entry>>,
}

#[derive(Clone)]
struct Entry {
    service: Box<str>,
    list: Instances,
    fetched: Instant,
    /// The source's version when fetched.
    source_version: u64,
}

impl std::fmt::Debug for CachingSupplier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachingSupplier")
            .field("ttl", &self.inner.ttl)
            .finish_non_exhaustive()
    }
}

impl CachingSupplier {
    /// Caches `source` for 35 s (Spring's `spring.cloud.loadbalancer.cache.ttl`).
    pub fn new(source: impl InstanceSupplier) -> Self {
        CachingSupplier::with_ttl(Arc::new(source), Duration::from_secs(35))
    }

    /// Caches `source` for `ttl` (at least 1 ms).
    pub fn with_ttl(source: Arc<dyn InstanceSupplier>, ttl: Duration) -> Self {
        let inner = Arc::new(Inner {
            source,
            ttl: ttl.max(Duration::from_millis(1)),
            entries: Versioned::default(),
        });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(refresh_loop(Arc::downgrade(&inner)));
        }
        CachingSupplier { inner }
    }
}

/// Refreshes every cached service every TTL, and as soon as the source changes.
async fn refresh_loop(weak: Weak<Inner>) {
    let (ttl, source) = match weak.upgrade() {
        Some(inner) => (inner.ttl, inner.source.clone()),
        None => return,
    };
    loop {
        let seen = source.version();
        tokio::select! {
            _ = tokio::time::sleep(ttl) => {}
            _ = source.changed(seen) => {}
        }
        let Some(inner) = weak.upgrade() else { return };
        let services: Vec<Box<str>> = inner
            .entries
            .read(|entries| entries.iter().map(|e| e.service.clone()).collect());
        for service in services {
            inner.fetch(&service);
        }
    }
}

impl Inner {
    /// Fetches `service` from the source; returns the list now cached.
    fn fetch(&self, service: &str) -> Option<Instances> {
        let source_version = self.source.version();
        let fresh = self.source.instances(service).filter(|l| !l.is_empty());
        let previous = self.entries.read(|entries| find(entries, service));
        let failed = fresh.is_none();
        let list = fresh.or_else(|| previous.as_ref().map(|e| e.list.clone()))?;
        if failed {
            // Kept as if fetched, so reads do not ask again (and warn again) before the next
            // change or TTL.
            tracing::warn!(
                service,
                "instance refresh failed; keeping the last good list"
            );
        }
        let changed = previous.as_ref().is_none_or(|e| e.list[..] != list[..]);
        let entry = Entry {
            service: service.into(),
            list: list.clone(),
            fetched: Instant::now(),
            source_version,
        };
        let replace = |entries: &Vec<Entry>| {
            let mut next: Vec<Entry> = entries
                .iter()
                .filter(|e| !e.service.eq_ignore_ascii_case(service))
                .cloned()
                .collect();
            next.push(entry.clone());
            next
        };
        if changed {
            self.entries.update(replace);
        } else {
            self.entries.update_quietly(replace);
        }
        Some(list)
    }
}

/// The cached entry of `service`, if any.
fn find(entries: &[Entry], service: &str) -> Option<Entry> {
    entries
        .iter()
        .find(|e| e.service.eq_ignore_ascii_case(service))
        .cloned()
}

impl InstanceSupplier for CachingSupplier {
    fn instances(&self, service_id: &str) -> Option<Instances> {
        let cached = self.inner.entries.read(|entries| find(entries, service_id));
        let source_version = self.inner.source.version();
        match cached {
            Some(e)
                if e.fetched.elapsed() < self.inner.ttl && e.source_version == source_version =>
            {
                Some(e.list)
            }
            _ => self.inner.fetch(service_id),
        }
    }

    fn version(&self) -> u64 {
        self.inner.entries.version()
    }

    fn changed(&self, seen: u64) -> BoxFuture<'static, ()> {
        self.inner.entries.changed(seen)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::{ServiceInstance, StaticSupplier};

    fn list(ports: &[u16]) -> Vec<ServiceInstance> {
        ports
            .iter()
            .map(|&port| ServiceInstance::new("svc", "127.0.0.1", port))
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_of_the_source_passes_through_at_once() {
        let source = StaticSupplier::new("svc", ["http://127.0.0.1:1"]);
        let cache = CachingSupplier::with_ttl(Arc::new(source.clone()), Duration::from_secs(35));
        tokio::task::yield_now().await; // let the refresh task start
        assert_eq!(cache.instances("svc").unwrap().len(), 1);
        let v0 = cache.version();
        source.set("svc", list(&[1, 2]));
        assert_eq!(
            cache.instances("svc").unwrap().len(),
            2,
            "read again at once"
        );
        source.set("svc", list(&[1, 2, 3]));
        tokio::task::yield_now().await;
        assert!(cache.version() > v0, "the cache's own version moved");
        assert_eq!(cache.instances("svc").unwrap().len(), 3);
    }

    /// A source whose version never moves: only the TTL brings its changes.
    struct Silent(Mutex<Option<Instances>>);

    impl InstanceSupplier for Silent {
        fn instances(&self, _service_id: &str) -> Option<Instances> {
            self.0.lock().unwrap().clone()
        }

        fn version(&self) -> u64 {
            1
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_source_is_read_every_ttl_keeping_the_last_good_list() {
        let source = Arc::new(Silent(Mutex::new(Some(list(&[1]).into()))));
        let cache = CachingSupplier::with_ttl(source.clone(), Duration::from_secs(35));
        tokio::task::yield_now().await;
        assert_eq!(cache.instances("svc").unwrap().len(), 1);
        let v0 = cache.version();

        *source.0.lock().unwrap() = Some(list(&[1, 2]).into());
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(cache.instances("svc").unwrap().len(), 1, "still cached");
        tokio::time::sleep(Duration::from_secs(30)).await; // the background refresh ran
        assert!(cache.version() > v0);
        assert_eq!(cache.instances("svc").unwrap().len(), 2);

        *source.0.lock().unwrap() = None; // the source fails
        tokio::time::sleep(Duration::from_secs(40)).await;
        assert_eq!(
            cache.instances("svc").unwrap().len(),
            2,
            "last good list kept"
        );
        *source.0.lock().unwrap() = Some(list(&[]).into()); // the source answers empty
        tokio::time::sleep(Duration::from_secs(40)).await;
        assert_eq!(
            cache.instances("svc").unwrap().len(),
            2,
            "an empty answer is not cached"
        );
    }
}
