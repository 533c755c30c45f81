//! Active health checks (Spring's `HealthCheckServiceInstanceListSupplier`, with Envoy's
//! healthy and unhealthy thresholds): poll each instance with the calls' transport settings and
//! serve only the healthy ones, but never an empty list.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use feign_core::transport::HttpClientConfig;
use feign_core::{BoxError, Options};
use futures_util::future::BoxFuture;
use tokio::time::Instant;

use super::versioned::Versioned;
use crate::{InstanceSupplier, Instances, ServiceInstance};

/// The path checked when neither a path nor a port is configured and the instance registered
/// no health check URL.
const DEFAULT_PATH: &str = "/actuator/health";

/// Serves the instances of `source` that pass their health checks: `GET` answered 200. Checks
/// run every 25 s (Spring's default) from a background task started by
/// [`HealthCheckSupplier::with_options`] inside a tokio runtime.
///
/// - **What is checked**: the configured path ([`HealthCheckOptions::path`]) on the instance,
///   at the configured port ([`HealthCheckOptions::port`]) or its own; when neither is
///   configured, the URL the instance registered ([`ServiceInstance::health_check_url`],
///   Eureka's `healthCheckUrl`), else `/actuator/health`.
/// - **How**: with the calls' TLS, proxy and pool settings and their connect timeout
///   ([`HealthCheckOptions::transport`]), so that instances behind a private CA or mutual TLS
///   are checked as they are called; each check within [`HealthCheckOptions::timeout`].
/// - **When an instance flips** (Envoy's thresholds): it is served until its first check, which
///   decides alone; after that it takes [`HealthCheckOptions::unhealthy_threshold`] failed
///   checks in a row (2 by default) to take it out and
///   [`HealthCheckOptions::healthy_threshold`] passed ones in a row (2) to bring it back, so
///   one lost check does not flip it.
/// - **New instances**: with [`HealthCheckOptions::refetch_instances`] (Spring's
///   `health-check.refetch-instances`) those not checked yet are checked as soon as the source
///   lists them (and the source is read again every refetch interval); otherwise at the next
///   round.
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
    options: HealthCheckOptions,
    services: ArcSwap<Vec<Box<str>>>,
    unhealthy: Versioned<HashSet<Box<str>>>,
    wake: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for HealthCheckSupplier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HealthCheckSupplier")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

/// Settings of a [`HealthCheckSupplier`].
#[derive(Debug, Clone)]
#[must_use]
pub struct HealthCheckOptions {
    path: Option<String>,
    port: Option<u16>,
    initial_delay: Duration,
    interval: Duration,
    timeout: Duration,
    panic_threshold: f64,
    healthy_threshold: u32,
    unhealthy_threshold: u32,
    refetch: Option<Duration>,
    http: HttpClientConfig,
    connect_timeout: Option<Duration>,
}

impl Default for HealthCheckOptions {
    fn default() -> Self {
        HealthCheckOptions {
            path: None,
            port: None,
            initial_delay: Duration::ZERO,
            interval: Duration::from_secs(25),
            timeout: Duration::from_secs(5),
            panic_threshold: 0.5,
            healthy_threshold: 2,
            unhealthy_threshold: 2,
            refetch: None,
            http: HttpClientConfig::default(),
            connect_timeout: None,
        }
    }
}

impl HealthCheckOptions {
    /// Every 25 s, 5 s per check, two checks in a row to flip an instance, panic past half
    /// unhealthy; the registered health check URL or `/actuator/health`.
    pub fn new() -> Self {
        HealthCheckOptions::default()
    }

    /// The path checked on every instance, instead of the URL it registered (default: that URL,
    /// else `/actuator/health`). Spring's `health-check.path.<service>`.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = Some(if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        });
        self
    }

    /// The port checked on every instance, instead of the one it serves calls on and of the
    /// URL it registered (Spring's `health-check.port`; default: none).
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
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

    /// Time one check may take, connecting included (default 5 s; at least 1 ms).
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

    /// Passed checks in a row that bring an unhealthy instance back (Envoy's
    /// `healthy_threshold`; default 2, at least 1).
    pub fn healthy_threshold(mut self, checks: u32) -> Self {
        self.healthy_threshold = checks.max(1);
        self
    }

    /// Failed checks in a row that take a healthy instance out (Envoy's
    /// `unhealthy_threshold`; default 2, at least 1: 1 flips it on any lost check).
    pub fn unhealthy_threshold(mut self, checks: u32) -> Self {
        self.unhealthy_threshold = checks.max(1);
        self
    }

    /// Checks instances the source lists that were not checked yet as soon as it lists them,
    /// and reads the source again every `interval` for them (Spring's
    /// `health-check.refetch-instances` and `refetch-instances-interval`, 25 s there). Off by
    /// default: new instances are served unchecked until the next round.
    pub fn refetch_instances(mut self, interval: Duration) -> Self {
        self.refetch = Some(interval.max(Duration::from_millis(10)));
        self
    }

    /// Checks with the TLS, proxy and pool settings and the connect timeout the balanced calls
    /// use (the `HttpClientConfig` and `Options` given to their client's builder), so that
    /// instances behind a private CA, mutual TLS or a proxy are checked as they are called.
    /// Default: feign-rs's reqwest defaults (public roots, no client certificate, the
    /// environment's proxies), connecting within the check's timeout. A connect timeout longer
    /// than [`HealthCheckOptions::timeout`] is cut to it.
    pub fn transport(mut self, http: HttpClientConfig, options: &Options) -> Self {
        self.http = http;
        self.connect_timeout = Some(options.get_connect_timeout());
        self
    }

    /// The URL checked for `instance`.
    fn target(&self, instance: &ServiceInstance) -> String {
        if self.path.is_none() && self.port.is_none() {
            if let Some(registered) = registered_target(instance) {
                return registered;
            }
        }
        let path = self.path.as_deref().unwrap_or(DEFAULT_PATH);
        match self.port {
            None => format!("{}{path}", instance.base_url()),
            Some(port) => format!("{}{path}", at(instance, port, instance.is_secure())),
        }
    }

    /// The HTTP client the checks go through.
    fn client(&self) -> Result<reqwest::Client, BoxError> {
        let connect = self
            .connect_timeout
            .map_or(self.timeout, |c| c.min(self.timeout));
        let builder = feign_core::client::reqwest_builder(connect, None, Some(self.timeout));
        Ok(self.http.apply(builder)?.build()?)
    }
}

/// The instance's registered health check URL made safe to call: its scheme, port (the
/// scheme's default when it names none), path and query, on the instance's own host whatever
/// host it names. `None` when there is none, or it is not an absolute `http` or `https` URL
/// without user info and with a port other than 0.
fn registered_target(instance: &ServiceInstance) -> Option<String> {
    let uri: http::Uri = instance.health_check_url()?.parse().ok()?;
    let secure = match uri.scheme_str()? {
        "http" => false,
        "https" => true,
        _ => return None,
    };
    let authority = uri.authority()?;
    if authority.as_str().contains('@') {
        return None;
    }
    let port = authority
        .port_u16()
        .unwrap_or(if secure { 443 } else { 80 });
    if port == 0 {
        return None;
    }
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    Some(format!("{}{path}", at(instance, port, secure)))
}

/// `http(s)://host:port` of `instance`'s host.
fn at(instance: &ServiceInstance, port: u16, secure: bool) -> Arc<str> {
    ServiceInstance::new("", instance.host(), port)
        .with_secure(secure)
        .base_url()
        .clone()
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
            options,
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

/// An instance's standing: its verdict and how many checks in a row said otherwise.
#[derive(Debug, Clone, Copy)]
struct Tally {
    healthy: bool,
    against: u32,
}

impl Tally {
    /// The standing after the first check, which decides alone.
    fn first(passed: bool) -> Tally {
        Tally {
            healthy: passed,
            against: 0,
        }
    }

    /// Counts one more check; returns the new verdict when it flips.
    fn record(&mut self, passed: bool, options: &HealthCheckOptions) -> Option<bool> {
        if passed == self.healthy {
            self.against = 0;
            return None;
        }
        self.against += 1;
        let needed = if passed {
            options.healthy_threshold
        } else {
            options.unhealthy_threshold
        };
        if self.against < needed {
            return None;
        }
        *self = Tally::first(passed);
        Some(passed)
    }
}

/// Which instances a round checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Round {
    All,
    /// Only those never checked: of a service asked for the first time, or new in the source.
    New,
}

async fn check_loop(weak: Weak<Inner>) {
    let (client, initial_delay) = match weak.upgrade() {
        Some(inner) => (inner.options.client(), inner.options.initial_delay),
        None => return,
    };
    let client = match client {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "health checks disabled: their http client could not be built");
            return;
        }
    };
    if !initial_delay.is_zero() {
        tokio::time::sleep(initial_delay).await;
    }
    let mut tallies: HashMap<Box<str>, Tally> = HashMap::new();
    loop {
        let Some(inner) = weak.upgrade() else { return };
        inner.check(&client, &mut tallies, Round::All).await;
        let next_round = Instant::now() + inner.options.interval;
        let (wake, source, refetch) = (
            inner.wake.clone(),
            inner.source.clone(),
            inner.options.refetch,
        );
        drop(inner);
        loop {
            let seen = source.version();
            let listed = async {
                match refetch {
                    Some(every) => {
                        tokio::select! {
                            _ = source.changed(seen) => {}
                            _ = tokio::time::sleep(every) => {}
                        }
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = tokio::time::sleep_until(next_round) => break,
                // A service asked for the first time, or (refetching) instances listed anew.
                _ = wake.notified() => {}
                _ = listed => {}
            }
            let Some(inner) = weak.upgrade() else { return };
            inner.check(&client, &mut tallies, Round::New).await;
        }
    }
}

impl Inner {
    /// Checks the instances `round` names of every service asked for, counts the results in
    /// `tallies`, and publishes the unhealthy ones if they changed.
    async fn check(
        &self,
        client: &reqwest::Client,
        tallies: &mut HashMap<Box<str>, Tally>,
        round: Round,
    ) {
        let services = self.services.load_full();
        let mut listed = HashSet::new();
        for service in services.iter() {
            let Some(list) = self.source.instances(service) else {
                continue;
            };
            let due: Vec<&ServiceInstance> = list
                .iter()
                .filter(|i| round == Round::All || !tallies.contains_key(&key(i)))
                .collect();
            let checks = due.iter().map(|instance| self.passes(client, instance));
            let results = futures_util::future::join_all(checks).await;
            for (instance, passed) in due.into_iter().zip(results) {
                self.count(tallies, instance, passed);
            }
            listed.extend(list.iter().map(key));
        }
        if round == Round::All {
            tallies.retain(|k, _| listed.contains(k));
        }
        let unhealthy: HashSet<Box<str>> = tallies
            .iter()
            .filter(|(_, t)| !t.healthy)
            .map(|(k, _)| k.clone())
            .collect();
        if self.unhealthy.read(|known| *known != unhealthy) {
            self.unhealthy.publish(unhealthy);
        }
    }

    /// Counts one check of `instance`, logging a flip.
    fn count(
        &self,
        tallies: &mut HashMap<Box<str>, Tally>,
        instance: &ServiceInstance,
        passed: bool,
    ) {
        let flipped = match tallies.get_mut(&key(instance)) {
            Some(tally) => tally.record(passed, &self.options),
            None => {
                tallies.insert(key(instance), Tally::first(passed));
                (!passed).then_some(false)
            }
        };
        match flipped {
            Some(false) => tracing::warn!(
                service = instance.service_id(),
                instance = instance.instance_id(),
                "instance failed its health checks; taken out"
            ),
            Some(true) => tracing::info!(
                service = instance.service_id(),
                instance = instance.instance_id(),
                "instance passed its health checks again; back in"
            ),
            None => {}
        }
    }

    /// Whether `instance` answers its check with 200 in time.
    async fn passes(&self, client: &reqwest::Client, instance: &ServiceInstance) -> bool {
        let url = self.options.target(instance);
        match tokio::time::timeout(self.options.timeout, client.get(&url).send()).await {
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
            let panic = (down as f64) > list.len() as f64 * self.inner.options.panic_threshold;
            if healthy.is_empty() || panic {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_the_configured_path_and_port_else_the_registered_url() {
        let instance = ServiceInstance::new("svc", "10.0.0.7", 8080);
        let registered = instance
            .clone()
            .with_health_check_url("http://10.0.0.7:8081/manage/health");
        let defaults = HealthCheckOptions::new();
        assert_eq!(
            defaults.target(&instance),
            "http://10.0.0.7:8080/actuator/health"
        );
        assert_eq!(
            defaults.target(&registered),
            "http://10.0.0.7:8081/manage/health"
        );
        let path = HealthCheckOptions::new().path("ready");
        assert_eq!(path.target(&registered), "http://10.0.0.7:8080/ready");
        let port = HealthCheckOptions::new().port(9090);
        assert_eq!(
            port.target(&registered.with_secure(true)),
            "https://10.0.0.7:9090/actuator/health"
        );
    }

    #[test]
    fn a_registered_url_is_called_on_the_instance_host_only() {
        let target = |url: &str| {
            let instance = ServiceInstance::new("svc", "10.0.0.7", 8080).with_health_check_url(url);
            HealthCheckOptions::new().target(&instance)
        };
        assert_eq!(
            target("http://169.254.169.254/latest/meta-data?x=1#f"),
            "http://10.0.0.7:80/latest/meta-data?x=1"
        );
        assert_eq!(
            target("https://h:9443/health"),
            "https://10.0.0.7:9443/health"
        );
        for unusable in [
            "ftp://h/health",
            "http://u:p@h:1/health",
            "/health",
            "http://h:0/",
            "not a url",
        ] {
            assert_eq!(
                target(unusable),
                "http://10.0.0.7:8080/actuator/health",
                "{unusable}"
            );
        }
    }

    #[test]
    fn one_check_does_not_flip_a_verdict_but_the_thresholds_do() {
        let options = HealthCheckOptions::new().healthy_threshold(3);
        let mut tally = Tally::first(true);
        assert_eq!(tally.record(false, &options), None);
        assert_eq!(tally.record(true, &options), None, "the streak starts over");
        assert_eq!(tally.record(false, &options), None);
        assert_eq!(tally.record(false, &options), Some(false));
        assert_eq!(tally.record(true, &options), None);
        assert_eq!(tally.record(true, &options), None);
        assert_eq!(tally.record(true, &options), Some(true));
    }
}
