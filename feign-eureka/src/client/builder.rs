//! `EurekaClientBuilder`: every client setting, with Eureka's defaults.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::backup::BackupRegistry;
use super::discovery::DiscoveryConfig;
use super::endpoint::Endpoint;
use super::health::{HealthCheck, HealthPoll};
use super::registration::RegistrationSettings;
use super::routing::RoutingPolicy;
use super::transport::TransportConfig;
use super::{Error, EurekaClient, InstanceConfig};

/// The application's health check, held by the builder (shown without its closure).
#[derive(Clone)]
pub(crate) struct HealthCheckSlot(pub(crate) Arc<dyn HealthCheck>);

impl fmt::Debug for HealthCheckSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HealthCheck")
    }
}

/// Builds and starts an [`EurekaClient`]. Errors are reported by [`EurekaClientBuilder::start`].
///
/// Give an [`InstanceConfig`] to register, leave it out to only discover; turn
/// [`fetch_registry`](EurekaClientBuilder::fetch_registry) off to only register.
#[derive(Debug)]
#[must_use]
pub struct EurekaClientBuilder {
    pub(crate) enabled: bool,
    pub(crate) service_urls: Vec<(String, String)>,
    pub(crate) instance: Option<InstanceConfig>,
    pub(crate) fetch_registry: bool,
    pub(crate) registry_fetch_interval: Duration,
    pub(crate) backoff_bound: u32,
    pub(crate) connect_timeout: Duration,
    pub(crate) read_timeout: Duration,
    pub(crate) max_registry_bytes: usize,
    pub(crate) registration_jitter: Duration,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) enforce_fetch_at_init: bool,
    pub(crate) disable_delta: bool,
    pub(crate) policy: RoutingPolicy,
    pub(crate) drop_guard: bool,
    pub(crate) session_duration: Duration,
    pub(crate) preferred_zone: Option<String>,
    pub(crate) backup: Option<BackupRegistry>,
    pub(crate) seed: Option<u64>,
    pub(crate) health_check: Option<HealthCheckSlot>,
    pub(crate) health_check_enabled: Option<bool>,
    pub(crate) health_check_timeout: Duration,
    pub(crate) replication_interval: Duration,
    pub(crate) on_demand_status: bool,
    pub(crate) single_vip: Option<String>,
    pub(crate) http: feign_core::transport::HttpClientConfig,
    pub(crate) watch_enabled: bool,
    pub(crate) watch_timeout: Duration,
    pub(crate) deferred: Option<Error>,
}

impl Default for EurekaClientBuilder {
    fn default() -> Self {
        EurekaClientBuilder {
            enabled: true,
            service_urls: Vec::new(),
            instance: None,
            fetch_registry: true,
            registry_fetch_interval: Duration::from_secs(30),
            backoff_bound: 10,
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(8),
            max_registry_bytes: 32 * 1024 * 1024,
            registration_jitter: Duration::from_secs(2),
            shutdown_timeout: Duration::from_secs(5),
            enforce_fetch_at_init: false,
            disable_delta: false,
            policy: RoutingPolicy::default(),
            drop_guard: true,
            session_duration: Duration::from_secs(1200),
            preferred_zone: None,
            backup: None,
            seed: None,
            health_check: None,
            health_check_enabled: None,
            health_check_timeout: Duration::from_secs(5),
            replication_interval: Duration::from_secs(30),
            on_demand_status: true,
            single_vip: None,
            http: feign_core::transport::HttpClientConfig::default(),
            watch_enabled: false,
            watch_timeout: Duration::from_secs(30),
            deferred: None,
        }
    }
}

impl EurekaClientBuilder {
    /// Sets the fast values for local development, where the registry is on this machine and
    /// waiting is the cost: registration at once (no jitter: `start` registers before its first
    /// fetch), a registry fetch every 500 ms (instead of 30 s) and a 1 s bound on
    /// deregistration at shutdown (instead of 5 s).
    ///
    /// **Not for production**: a fleet restarting together would all register at the same
    /// instant, and every client would fetch twice a second. Setters called after this one
    /// override its values. An instance's lease is set on its [`InstanceConfig`]
    /// ([`lease_renewal_interval`](InstanceConfig::lease_renewal_interval)); pair this with a
    /// registry started as `feign-eureka serve --dev`.
    ///
    /// ```
    /// let builder = feign_eureka::EurekaClient::builder()
    ///     .development()
    ///     .service_urls(["http://127.0.0.1:8761/eureka/"]);
    /// ```
    pub fn development(self) -> Self {
        self.registration_jitter(Duration::ZERO)
            .registry_fetch_interval(Duration::from_millis(500))
            .shutdown_timeout(Duration::from_secs(1))
    }

    /// The Eureka servers of the default zone (`defaultZone`), e.g.
    /// `http://127.0.0.1:8761/eureka/` (Spring) or `http://host:8080/eureka/v2/` (Netflix).
    /// User info in a URL is sent as basic auth and never logged. Required.
    pub fn service_urls<I, S>(mut self, urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for url in urls {
            self.service_urls
                .push(("defaultZone".to_owned(), url.as_ref().to_owned()));
        }
        self
    }

    /// Eureka servers of a named zone. Servers of this instance's zone (its `zone` metadata, or
    /// [`preferred_zone`](EurekaClientBuilder::preferred_zone)) are tried first.
    pub fn zone_service_urls<I, S>(mut self, zone: &str, urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for url in urls {
            self.service_urls
                .push((zone.to_owned(), url.as_ref().to_owned()));
        }
        self
    }

    /// The zone whose servers are tried first (default: the instance's `zone` metadata, else
    /// `defaultZone`).
    pub fn preferred_zone(mut self, zone: impl Into<String>) -> Self {
        self.preferred_zone = Some(zone.into());
        self
    }

    /// Registers this instance (default: not registered, discovery only).
    pub fn instance(mut self, instance: InstanceConfig) -> Self {
        self.instance = Some(instance);
        self
    }

    /// Whether there is a client at all (default `true`): Spring's `eureka.client.enabled`.
    /// [`start`](EurekaClientBuilder::start) of a disabled builder is [`Error::Disabled`]; an
    /// application that runs without Eureka when it is off asks
    /// [`is_enabled`](EurekaClientBuilder::is_enabled) first.
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Whether [`start`](EurekaClientBuilder::start) starts a client: see
    /// [`enabled`](EurekaClientBuilder::enabled).
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Whether to fetch the registry (default `true`; `false` to register only).
    pub fn fetch_registry(mut self, fetch: bool) -> Self {
        self.fetch_registry = fetch;
        self
    }

    /// How often to fetch the registry delta (default 30 s).
    pub fn registry_fetch_interval(mut self, interval: Duration) -> Self {
        self.registry_fetch_interval = interval;
        self
    }

    /// How far failing heartbeats and fetches back off, as a multiple of their interval
    /// (default 10).
    pub fn backoff_bound(mut self, bound: u32) -> Self {
        self.backoff_bound = bound.max(1);
        self
    }

    /// Connect timeout per request (default 5 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Read timeout per request (default 8 s): the longest wait for the next bytes of an
    /// answer. A request as a whole, body included, must end within the connect timeout plus
    /// this, or it fails as timed out and the next server is tried.
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// TLS to the Eureka servers: a private CA, a client certificate for a registry that requires
    /// mutual TLS, protocol versions (see [`feign_core::transport::Tls`]). Files are read and
    /// checked by [`start`](EurekaClientBuilder::start), which fails with [`Error::HttpClient`]
    /// naming the file. Default: the public roots, no client certificate.
    pub fn tls(mut self, tls: feign_core::transport::Tls) -> Self {
        self.http = self.http.tls(tls);
        self
    }

    /// Reaches the Eureka servers through `proxy` (its password never logged). Default: none,
    /// and then the `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY` environment variables are
    /// followed.
    pub fn proxy(mut self, proxy: feign_core::transport::Proxy) -> Self {
        self.http = self.http.proxy(proxy);
        self
    }

    /// Replaces the TLS, proxy, pool and HTTP version settings at once, as feign-core's
    /// `Builder::http_client_config` does for a client.
    pub fn http_client_config(mut self, config: feign_core::transport::HttpClientConfig) -> Self {
        self.http = config;
        self
    }

    /// The largest registry document accepted, after decompression (default 32 MiB).
    pub fn max_registry_bytes(mut self, bytes: usize) -> Self {
        self.max_registry_bytes = bytes;
        self
    }

    /// The first registration waits a random time up to this, so a fleet restarting together
    /// does not hit Eureka at the same instant (default 2 s; zero to register at once).
    pub fn registration_jitter(mut self, jitter: Duration) -> Self {
        self.registration_jitter = jitter;
        self
    }

    /// The bound on deregistration during [`EurekaClient::shutdown`] (default 5 s).
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }

    /// Fail [`start`](EurekaClientBuilder::start) when the first fetch fails (default `false`:
    /// start anyway, with an empty registry, and keep trying).
    pub fn enforce_fetch_at_init(mut self, enforce: bool) -> Self {
        self.enforce_fetch_at_init = enforce;
        self
    }

    /// Always fetch the full registry instead of deltas (default `false`).
    pub fn disable_delta(mut self, disable: bool) -> Self {
        self.disable_delta = disable;
        self
    }

    /// Route only to `UP` instances (default `true`).
    pub fn filter_only_up_instances(mut self, only_up: bool) -> Self {
        self.policy.only_up = only_up;
        self
    }

    /// Allow routing to loopback addresses. Default `true`, so a development setup that
    /// registers `127.0.0.1` needs no call; call `.allow_loopback(false)` in production, where
    /// an instance registering a loopback address is a mistake.
    pub fn allow_loopback(mut self, allow: bool) -> Self {
        self.policy.allow_loopback = allow;
        self
    }

    /// Allow routing to link-local addresses such as `169.254.169.254` (default `false`).
    pub fn allow_link_local(mut self, allow: bool) -> Self {
        self.policy.allow_link_local = allow;
        self
    }

    /// Hold back, for one fetch, a full registry in which an application with at least three
    /// instances lost more than half of them (default `true`). Guards against a restarted
    /// registry that has not heard from everyone yet.
    pub fn drop_guard(mut self, guard: bool) -> Self {
        self.drop_guard = guard;
        self
    }

    /// The average time before the client picks a server again, to spread clients across
    /// servers; each session lasts a random 50–150 % of it (default 20 min).
    pub fn session_duration(mut self, duration: Duration) -> Self {
        self.session_duration = duration;
        self
    }

    /// Instances to serve when Eureka cannot be reached at start (Netflix's `BackupRegistry`):
    /// used only while no fetch has ever succeeded, replaced by the first successful fetch
    /// (default: none, the client starts with an empty registry). With
    /// [`enforce_fetch_at_init`](EurekaClientBuilder::enforce_fetch_at_init), a backup that
    /// loads lets the client start.
    pub fn backup_registry(mut self, backup: BackupRegistry) -> Self {
        self.backup = Some(backup);
        self
    }

    /// Seeds the client's random choice of Eureka server and of session lengths, for
    /// reproducible tests (default: a random seed).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Derives this instance's status from the application's health (Netflix's
    /// `HealthCheckHandler`; default: none, the status is what
    /// [`set_status`](EurekaClient::set_status) last set). The check is asked at once and then
    /// every [replication interval](EurekaClientBuilder::instance_info_replication_interval);
    /// a changed answer is sent to Eureka at once, within the on-demand rate limit. A panic or
    /// an answer later than the [timeout](EurekaClientBuilder::health_check_timeout) reads as
    /// `DOWN`. See [`HealthCheck`] for an example. Used only when this client registers;
    /// Spring's `eureka.client.healthcheck.enabled: false` turns it off.
    pub fn health_check(mut self, check: impl HealthCheck) -> Self {
        self.health_check = Some(HealthCheckSlot(Arc::new(check)));
        self
    }

    /// How long the [health check](EurekaClientBuilder::health_check) may take to answer before
    /// its answer counts as `DOWN` (default 5 s).
    pub fn health_check_timeout(mut self, timeout: Duration) -> Self {
        self.health_check_timeout = timeout;
        self
    }

    /// Netflix's `instanceInfoReplicationIntervalSeconds` (default 30 s): how often the
    /// [health check](EurekaClientBuilder::health_check) is asked, and the on-demand rate limit
    /// on re-registrations after a status or metadata change: 2 at once, then
    /// `60 × 2 / interval` a minute (4 for 30 s). Changes held back by the limit are sent
    /// together when it allows, or with the next heartbeat if that comes first.
    pub fn instance_info_replication_interval(mut self, interval: Duration) -> Self {
        self.replication_interval = interval.max(Duration::from_millis(100));
        self
    }

    /// Whether a status change ([`set_status`](EurekaClient::set_status) or the health
    /// check's) re-registers at once, within the on-demand rate limit (default `true`, Spring's
    /// `eureka.client.on-demand-update-status-change`); `false` sends it with the next
    /// heartbeat. Metadata changes are always sent on demand.
    pub fn on_demand_update_status_change(mut self, on_demand: bool) -> Self {
        self.on_demand_status = on_demand;
        self
    }

    /// Fetches only the instances of this VIP address (`GET vips/{vip}`) instead of the whole
    /// registry, and always in full, never as a delta (as Netflix's
    /// `registryRefreshSingleVipAddress`; default: the whole registry). Lookups then find the
    /// VIP and the applications of the instances that carry it.
    pub fn registry_fetch_single_vip_address(mut self, vip: impl Into<String>) -> Self {
        self.single_vip = Some(vip.into()).filter(|vip| !vip.trim().is_empty());
        self
    }

    /// Push discovery (default `false`): against a registry that offers it (feign-eureka-server
    /// does), the client keeps a long poll open (`GET watch`) that the registry answers with
    /// the delta as soon as an instance registers, changes or leaves, instead of fetching the
    /// delta every [interval](EurekaClientBuilder::registry_fetch_interval); changes reach it
    /// in milliseconds. Against any other Eureka server (Spring's, Netflix's), which does not
    /// offer it, the client polls exactly as without this setting; it also polls for an
    /// interval whenever a watch fails or the registry's watch cap is reached, and watches
    /// again once a fetch finds the watch offered. Ignored with
    /// [`disable_delta`](EurekaClientBuilder::disable_delta) or a
    /// [single VIP](EurekaClientBuilder::registry_fetch_single_vip_address).
    ///
    /// ```
    /// let builder = feign_eureka::EurekaClient::builder()
    ///     .service_urls(["http://127.0.0.1:8761/eureka/"])
    ///     .watch(true);
    /// ```
    pub fn watch(mut self, enabled: bool) -> Self {
        self.watch_enabled = enabled;
        self
    }

    /// How long one watch of [push discovery](EurekaClientBuilder::watch) waits for a change
    /// before the registry answers "none" and the client asks again (default 30 s). Kept within
    /// three quarters of the [read timeout](EurekaClientBuilder::read_timeout), which bounds
    /// every wait for an answer, and at least 100 ms.
    pub fn watch_timeout(mut self, timeout: Duration) -> Self {
        self.watch_timeout = timeout;
        self
    }

    pub(crate) fn endpoints(&self) -> Result<Vec<Endpoint>, Error> {
        if self.service_urls.is_empty() {
            return Err(Error::NoServiceUrl);
        }
        self.service_urls
            .iter()
            .map(|(zone, url)| Endpoint::parse(url, zone))
            .collect()
    }

    pub(crate) fn my_zone(&self) -> String {
        if let Some(zone) = &self.preferred_zone {
            return zone.clone();
        }
        let from_instance = self.instance.as_ref().and_then(|i| i.zone_metadata());
        from_instance.unwrap_or_else(|| {
            self.service_urls
                .first()
                .map(|(z, _)| z.clone())
                .unwrap_or_else(|| "defaultZone".to_owned())
        })
    }

    pub(crate) fn transport_config(&self) -> TransportConfig {
        TransportConfig {
            connect_timeout: self.connect_timeout,
            read_timeout: self.read_timeout,
            max_body_bytes: self.max_registry_bytes,
            session_duration: self.session_duration,
            my_zone: self.my_zone(),
            seed: self.seed,
            http: self.http.clone(),
        }
    }

    pub(crate) fn discovery_config(&self) -> DiscoveryConfig {
        DiscoveryConfig {
            interval: self.registry_fetch_interval.max(Duration::from_millis(100)),
            bound: self.backoff_bound,
            disable_delta: self.disable_delta,
            drop_guard: self.drop_guard,
            single_vip: self.single_vip.clone(),
            watch: (self.watch_enabled && !self.disable_delta && self.single_vip.is_none()).then(
                || {
                    self.watch_timeout
                        .min(self.read_timeout * 3 / 4)
                        .max(Duration::from_millis(100))
                },
            ),
        }
    }

    pub(crate) fn registration_settings(&self) -> RegistrationSettings {
        RegistrationSettings {
            replication_interval: self.replication_interval,
            on_demand_status: self.on_demand_status,
        }
    }

    /// The health poll, if a check is given and not turned off; an error if the configuration
    /// turned it on without a check.
    pub(crate) fn health_poll(&self) -> Result<Option<HealthPoll>, Error> {
        match (&self.health_check, self.health_check_enabled) {
            (None, Some(true)) => Err(Error::NoHealthCheck),
            (Some(_), Some(false)) | (None, _) => Ok(None),
            (Some(slot), _) => Ok(Some(HealthPoll {
                check: slot.0.clone(),
                interval: self.replication_interval,
                timeout: self.health_check_timeout,
            })),
        }
    }

    /// Validates the settings, fetches the registry once (unless discovery is off), and starts
    /// the background tasks: registration (after a jitter) and heartbeats, and registry
    /// refreshes. Without a jitter ([`development`](EurekaClientBuilder::development)), the
    /// instance registers before that fetch, so the registry `start` returns with lists it.
    /// Each step is bounded by the transport's timeouts; Eureka being down is logged, not an
    /// error, unless [`enforce_fetch_at_init`](EurekaClientBuilder::enforce_fetch_at_init) is
    /// set.
    pub async fn start(self) -> Result<EurekaClient, Error> {
        EurekaClient::start(self).await
    }
}
