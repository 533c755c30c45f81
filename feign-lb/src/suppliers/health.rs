//! Active health checks (Spring's `HealthCheckServiceInstanceListSupplier`): poll each instance
//! and serve only the healthy ones, but never an empty list.

use std::collections::HashSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use futures_util::future::BoxFuture;

use super::versioned::Versioned;
use crate::{InstanceSupplier, Instances, ServiceInstance};

/// Serves the instances of `source` whose `GET <base url><path>` answered 200 at the last
/// check. Checks run every 25 s (Spring's default) from a background task started by
/// [`HealthCheckSupplier::new`] inside a tokio runtime; an instance is healthy until a check
/// says otherwise.
///
/// When the unhealthy share passes the panic threshold (default 0.5: one of two unhealthy is
/// not a panic), and in particular when every check fails, it serves all instances rather
/// than an empty list (where Spring's supplier would emit none).
#[derive(Clone)]
pub struct HealthCheckSupplier {
    inner: Arc<Inner>,
}

struct Inner {
    source: Arc<dyn InstanceSupplier>,
    path: String,
    initial_delay: Duration,
    interval: Duration,
    timeout: Duration,
    panic_threshold: f64,
    services: ArcSwap<Vec<Box<str>>>,
    unhealthy: Versioned<HashSet<Box<str>>>,
    wake: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for HealthCheckSupplier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HealthCheckSupplier")
            .field("path", &self.inner.path)
            .field("interval", &self.inner.interval)
            .finish_non_exhaustive()
    }
}

/// Settings of a [`HealthCheckSupplier`].
#[derive(Debug, Clone)]
#[must_use]
pub struct HealthCheckOptions {
    path: String,
    initial_delay: Duration,
    interval: Duration,
    timeout: Duration,
    panic_threshold: f64,
}

impl Default for HealthCheckOptions {
    fn default() -> Self {
        HealthCheckOptions {
            path: "/actuator/health".to_owned(),
            initial_delay: Duration::ZERO,
            interval: Duration::from_secs(25),
            timeout: Duration::from_secs(5),
            panic_threshold: 0.5,
        }
    }
}

impl HealthCheckOptions {
    /// `/actuator/health` every 25 s, 5 s per check, panic past half unhealthy.
    pub fn new() -> Self {
        HealthCheckOptions::default()
    }

    /// The path checked (default `/actuator/health`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// Time before the first check, while every instance counts as healthy (Spring's
    /// `health-check.initial-delay`; default 0).
    pub fn initial_delay(mut self, delay: Duration) -> Self {
        self.initial_delay = delay;
        self
    }

    /// Time between checks (default 25 s; at least 10 ms).
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval.max(Duration::from_millis(10));
        self
    }

    /// Time one check may take (default 5 s; at least 1 ms).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The unhealthy share above which all instances are served (default 0.5, clamped to
    /// 0..=1; 1.0 serves all only when every check fails).
    pub fn panic_threshold(mut self, share: f64) -> Self {
        self.panic_threshold = if share.is_nan() {
            0.5
        } else {
            share.clamp(0.0, 1.0)
        };
        self
    }
}

impl HealthCheckSupplier {
    /// Health checks over `source` with the default options.
    pub fn new(source: impl InstanceSupplier) -> Self {
        HealthCheckSupplier::with_options(Arc::new(source), HealthCheckOptions::default())
    }

    /// Health checks over a shared `source`.
    pub fn with_options(source: Arc<dyn InstanceSupplier>, options: HealthCheckOptions) -> Self {
        let inner = Arc::new(Inner {
            source,
            path: options.path,
            initial_delay: options.initial_delay,
            interval: options.interval,
            timeout: options.timeout,
            panic_threshold: options.panic_threshold,
            services: ArcSwap::from_pointee(Vec::new()),
            unhealthy: Versioned::default(),
            wake: Arc::new(tokio::sync::Notify::new()),
        });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(check_loop(Arc::downgrade(&inner)));
        }
        HealthCheckSupplier { inner }
    }
}

async fn check_loop(weak: Weak<Inner>) {
    let (initial_delay, timeout) = match weak.upgrade() {
        Some(inner) => (inner.initial_delay, inner.timeout),
        None => return,
    };
    // A check's timeout bounds its connect too.
    let client = match feign_core::reqwest_builder(timeout, None, None).build() {
        Ok(client) => client,
        Err(error) => {
            tracing::warn!(%error, "health checks disabled: no http client");
            return;
        }
    };
    if !initial_delay.is_zero() {
        tokio::time::sleep(initial_delay).await;
    }
    loop {
        let Some(inner) = weak.upgrade() else { return };
        let interval = inner.interval;
        let wake = inner.wake.clone();
        inner.check_all(&client).await;
        drop(inner);
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = wake.notified() => {}
        }
    }
}

impl Inner {
    async fn check_all(&self, client: &reqwest::Client) {
        let services = self.services.load_full();
        let mut unhealthy = HashSet::new();
        for service in services.iter() {
            let Some(list) = self.source.instances(service) else {
                continue;
            };
            let checks = list.iter().map(|instance| self.check(client, instance));
            let results = futures_util::future::join_all(checks).await;
            for (instance, healthy) in list.iter().zip(results) {
                if !healthy {
                    unhealthy.insert(key(instance));
                }
            }
        }
        if self.unhealthy.read(|known| *known != unhealthy) {
            self.unhealthy.publish(unhealthy);
        }
    }

    async fn check(&self, client: &reqwest::Client, instance: &ServiceInstance) -> bool {
        let url = format!("{}{}", instance.base_url(), self.path);
        match tokio::time::timeout(self.timeout, client.get(&url).send()).await {
            Ok(Ok(response)) => response.status() == reqwest::StatusCode::OK,
            _ => false,
        }
    }
}

fn key(instance: &ServiceInstance) -> Box<str> {
    format!(
        "{}\u{0}{}",
        instance.service_id().to_ascii_lowercase(),
        instance.instance_id()
    )
    .into()
}

impl InstanceSupplier for HealthCheckSupplier {
    fn instances(&self, service_id: &str) -> Option<Instances> {
        if !self
            .inner
            .services
            .load()
            .iter()
            .any(|s| s.eq_ignore_ascii_case(service_id))
        {
            self.inner.services.rcu(|list| {
                let mut next = (**list).clone();
                if !next.iter().any(|s| s.eq_ignore_ascii_case(service_id)) {
                    next.push(service_id.into());
                }
                next
            });
            self.inner.wake.notify_one(); // check the new service now
        }
        let list = self.inner.source.instances(service_id)?;
        self.inner.unhealthy.read(|unhealthy| {
            if unhealthy.is_empty() {
                return Some(list);
            }
            let healthy: Vec<ServiceInstance> = list
                .iter()
                .filter(|i| !unhealthy.contains(&key(i)))
                .cloned()
                .collect();
            let down = list.len() - healthy.len();
            if healthy.is_empty() || (down as f64) > list.len() as f64 * self.inner.panic_threshold
            {
                return Some(list);
            }
            Some(healthy.into())
        })
    }

    fn version(&self) -> u64 {
        self.inner
            .source
            .version()
            .wrapping_add(self.inner.unhealthy.version())
    }

    fn changed(&self, seen: u64) -> BoxFuture<'static, ()> {
        let own = self.inner.unhealthy.version();
        let source_seen = seen.wrapping_sub(own);
        let a = self.inner.source.changed(source_seen);
        let b = self.inner.unhealthy.changed(own);
        Box::pin(async move {
            futures_util::future::select(a, b).await;
        })
    }
}
