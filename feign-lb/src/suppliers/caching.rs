//! A cache in front of a slower supplier (Spring's `CachingServiceInstanceListSupplier`), that
//! keeps the last good list when a refresh fails or comes back empty.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::versioned::Versioned;
use crate::{InstanceSupplier, Instances};

/// Caches each service's list for a TTL (35 s by default). A refresh that fails (the source
/// knows nothing of the service) or returns an empty list keeps the last good list.
///
/// Refreshes run in the background every TTL when created inside a tokio runtime, and on a
/// read of an expired entry otherwise.
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

async fn refresh_loop(weak: Weak<Inner>) {
    let ttl = match weak.upgrade() {
        Some(inner) => inner.ttl,
        None => return,
    };
    loop {
        tokio::time::sleep(ttl).await;
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
        let fresh = self.source.instances(service).filter(|l| !l.is_empty());
        let previous = self.entries.read(|entries| find(entries, service));
        let Some(list) = fresh else {
            if previous.is_some() {
                tracing::warn!(
                    service,
                    "instance refresh failed; keeping the last good list"
                );
            }
            return previous.map(|e| e.list);
        };
        let changed = previous.as_ref().is_none_or(|e| e.list[..] != list[..]);
        let entry = Entry {
            service: service.into(),
            list: list.clone(),
            fetched: Instant::now(),
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
        match cached {
            Some(e) if e.fetched.elapsed() < self.inner.ttl => Some(e.list),
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
    use super::*;
    use crate::{ServiceInstance, StaticSupplier};

    #[tokio::test(start_paused = true)]
    async fn serves_the_cache_for_the_ttl_then_refreshes_keeping_the_last_good_list() {
        let source = StaticSupplier::new("svc", ["http://127.0.0.1:1"]);
        let cache = CachingSupplier::with_ttl(Arc::new(source.clone()), Duration::from_secs(35));
        tokio::task::yield_now().await; // let the refresh task start its clock
        assert_eq!(cache.instances("svc").unwrap().len(), 1);
        let v0 = cache.version();

        source.set(
            "svc",
            vec![
                ServiceInstance::new("svc", "127.0.0.1", 1),
                ServiceInstance::new("svc", "127.0.0.1", 2),
            ],
        );
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(cache.instances("svc").unwrap().len(), 1, "still cached");

        tokio::time::sleep(Duration::from_secs(30)).await; // the background refresh ran
        assert!(cache.version() > v0);
        assert_eq!(cache.instances("svc").unwrap().len(), 2);

        source.remove("svc"); // the source fails
        tokio::time::sleep(Duration::from_secs(40)).await;
        assert_eq!(
            cache.instances("svc").unwrap().len(),
            2,
            "last good list kept"
        );
        source.set("svc", vec![]); // the source answers empty
        tokio::time::sleep(Duration::from_secs(40)).await;
        assert_eq!(
            cache.instances("svc").unwrap().len(),
            2,
            "an empty answer is not cached"
        );
    }
}
