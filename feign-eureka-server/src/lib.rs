//! feign-eureka-server: an embedded Eureka-compatible registry for feign-rs, its dashboard and
//! the `feign-eureka` binary.
//!
//! It speaks the Eureka REST API under both `/eureka/` and `/eureka/v2/`, so the Eureka client
//! of [`feign_eureka`] and Java/Spring Eureka clients register and discover through it: leases with
//! the clients' durations, eviction, self-preservation, the two-level response cache, the
//! three-minute delta queue with `apps__hashcode`, status overrides, `lastDirtyTimestamp` rules
//! and asynchronous peer replication. An HTML dashboard is served at `/`.
//!
//! Safe by default: it binds `127.0.0.1`, limits bodies to 1 MiB, bounds metadata and names, an
//! instance's size, the registry's size and its count of instances (so every client can read it),
//! validates application names, clamps lease durations to 1 s ..= 1 h, rate-limits registrations
//! (requests and bytes) per client address and metadata updates per instance, answers bad input
//! with 400/413/415/429 and a plain-text reason, closes connections that send their headers or
//! bodies too slowly, take their responses too slowly or stay idle too long, makes room for a new
//! connection at its cap (or when file descriptors run out) by closing the one that has waited on
//! its client the longest, and shuts down gracefully.
//!
//! # Embedding
//!
//! ```no_run
//! use std::time::Duration;
//! use feign_eureka_server::EurekaServer;
//!
//! # async fn run() -> Result<(), feign_eureka_server::ServerError> {
//! let server = EurekaServer::builder()
//!     .bind("127.0.0.1:0")
//!     .self_preservation(false)
//!     .read_only_cache(false)
//!     .eviction_interval(Duration::from_secs(1))
//!     .start()
//!     .await?;
//! println!("registry at {}, dashboard at {}", server.url(), server.dashboard_url());
//! // Point clients at server.url(), e.g. http://127.0.0.1:PORT/eureka/
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Deviations from Netflix Eureka
//!
//! Plain-text 400 reasons are labelled `text/plain` (Eureka labels them with the negotiated
//! XML or JSON type); malformed
//! `lastDirtyTimestamp` or status values get 400 with a reason where Eureka answers 500; the
//! 1-hour expiry of unused admin overrides is not implemented (overrides end on cancel or
//! `DELETE .../status`); replication is taken only from peers (known by their credentials,
//! client certificate or address) unless
//! [`EurekaServerBuilder::replication_from_any_address`] is set.

mod answer;
mod api;
mod auth;
mod batch;
mod cache;
mod config;
mod conn;
mod dashboard;
mod delta;
mod error;
mod html;
mod lease;
mod listen;
mod listing;
mod media;
mod offload;
mod peer_sync;
mod peers;
mod rate;
mod record;
mod registration;
mod registry;
mod render;
mod replication;
mod replicator;
mod rules;
mod state;
mod sync;
mod tasks;
mod tls;
mod validate;
mod watch;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::routing::{any, get};
use axum::Router;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use error::ServerError;
pub use tls::TlsError;

use config::{RateLimit, ServerConfig};
use rate::RateLimiter;
use registry::Registry;
use replicator::Replicator;
use state::AppState;

/// A running registry. Dropping it leaves the server running until the runtime ends; call
/// [`EurekaServer::shutdown`] to stop it gracefully.
#[derive(Debug)]
pub struct EurekaServer {
    state: Arc<AppState>,
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    serve: Option<JoinHandle<()>>,
    background: Vec<JoinHandle<()>>,
    grace: Duration,
}

impl EurekaServer {
    /// A builder with Eureka's defaults and safe limits.
    pub fn builder() -> EurekaServerBuilder {
        EurekaServerBuilder::default()
    }

    /// The service URL clients use, e.g. `http://127.0.0.1:8761/eureka/` (`/eureka/v2/` works
    /// too).
    pub fn url(&self) -> &str {
        &self.state.url
    }

    /// The dashboard's URL, e.g. `http://127.0.0.1:8761/`.
    pub fn dashboard_url(&self) -> String {
        self.url().trim_end_matches("eureka/").to_owned()
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The number of registered instances.
    pub fn instance_count(&self) -> usize {
        self.state.registry.size()
    }

    /// The self-preservation numbers as Eureka computes them (§5.3 of the protocol notes).
    pub fn self_preservation(&self) -> SelfPreservation {
        let registry = &self.state.registry;
        let expectation = registry.expectation();
        SelfPreservation {
            enabled: registry.config.self_preservation,
            expected_clients: expectation.expected_clients,
            renews_threshold: expectation.renews_threshold,
            renews_last_minute: registry.renews_last_min(),
            lease_expiration_enabled: registry.lease_expiration_enabled(),
        }
    }

    /// Replication items dropped because a peer's queue was full.
    pub fn dropped_replications(&self) -> u64 {
        self.state.registry.replicator().dropped()
    }

    /// About the bytes the delta queue's instances hold (each stored copy counted once), to
    /// watch that the queue stays bounded. Not a stable API.
    #[doc(hidden)]
    pub fn delta_queue_bytes(&self) -> usize {
        self.state.registry.delta_bytes()
    }

    /// How many documents the read-only response cache holds, to watch that names in requests
    /// cannot fill it. Not a stable API.
    #[doc(hidden)]
    pub fn cached_documents(&self) -> usize {
        self.state.registry.read_only_cached()
    }

    /// How many times the delta was rendered for push discovery's watches, to watch that
    /// renderings follow the changes rather than the watches. Not a stable API.
    #[doc(hidden)]
    pub fn watch_renders(&self) -> u64 {
        self.state.watches.renders()
    }

    /// Runs one eviction pass now, as the eviction timer does; returns how many leases were
    /// evicted.
    pub fn evict_now(&self) -> usize {
        self.state.registry.evict(0)
    }

    /// Stops accepting connections, closes idle ones, answers requests already received (each
    /// connection then closes; a request that still arrives gets 503 with `Retry-After`), waits
    /// up to the grace period, then stops the background tasks. The port can be bound again as
    /// soon as this returns.
    pub async fn shutdown(mut self) {
        self.state.shutting_down.store(true, Ordering::SeqCst);
        self.state.watches.close();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut serve) = self.serve.take() {
            if tokio::time::timeout(self.grace, &mut serve).await.is_err() {
                tracing::warn!("grace period over; closing the remaining connections");
                serve.abort();
                let _ = serve.await;
            }
        }
        for task in self.background.drain(..) {
            task.abort();
        }
    }
}

impl Drop for EurekaServer {
    fn drop(&mut self) {
        for task in &self.background {
            task.abort();
        }
    }
}

/// A snapshot of the self-preservation state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SelfPreservation {
    /// Whether self-preservation is switched on.
    pub enabled: bool,
    /// Eureka's `expectedNumberOfClientsSendingRenews`: the configured count, plus each
    /// instance that has proved its client alive (see
    /// [`EurekaServerBuilder::expected_client_renewal_interval`]).
    pub expected_clients: u32,
    /// Renewals per minute needed to allow eviction:
    /// `⌊expected × (60 / 30) × threshold⌋`.
    pub renews_threshold: u32,
    /// Renewals counted in the last complete minute.
    pub renews_last_minute: u64,
    /// Whether eviction currently runs (self-preservation off, or renewals above threshold).
    pub lease_expiration_enabled: bool,
}

/// Configures and starts an [`EurekaServer`].
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct EurekaServerBuilder {
    config: ServerConfig,
}

impl EurekaServerBuilder {
    /// Sets the values for local development, the same as `feign-eureka serve --dev`: reads
    /// served straight from the read-write cache (no read-only cache), so a registration shows
    /// in the next fetch; no self-preservation; eviction every second; a 1 s shutdown grace.
    ///
    /// **Not for production**: without self-preservation, a network split evicts every
    /// instance that cannot renew. Setters called after this one override its values; pair it
    /// with `EurekaClient::builder().development()`.
    ///
    /// ```
    /// let builder = feign_eureka_server::EurekaServer::builder()
    ///     .development()
    ///     .bind("127.0.0.1:0");
    /// ```
    pub fn development(self) -> Self {
        self.read_only_cache(false)
            .self_preservation(false)
            .eviction_interval(Duration::from_secs(1))
            .shutdown_grace(Duration::from_secs(1))
    }

    /// The listen address. Default `127.0.0.1:8761`; use port 0 for any free port.
    pub fn bind(mut self, addr: impl Into<String>) -> Self {
        self.config.bind = addr.into();
        self
    }

    /// How often expired leases are evicted. Default 60 s.
    pub fn eviction_interval(mut self, interval: Duration) -> Self {
        self.config.eviction_interval = interval;
        self
    }

    /// Whether self-preservation may stop eviction when renewals fall below the threshold.
    /// Default on, as in Eureka; switch it off for development and tests.
    pub fn self_preservation(mut self, enabled: bool) -> Self {
        self.config.self_preservation = enabled;
        self
    }

    /// The fraction of expected renewals below which self-preservation engages, in (0, 1].
    /// Default 0.85.
    pub fn renewal_percent_threshold(mut self, threshold: f64) -> Self {
        self.config.renewal_percent_threshold = threshold;
        self
    }

    /// How often the expected renewal count is recomputed from the registry. Default 15 min.
    pub fn renewal_threshold_update_interval(mut self, interval: Duration) -> Self {
        self.config.renewal_threshold_update_interval = interval;
        self
    }

    /// The interval at which clients are expected to renew (Spring's
    /// `expected-client-renewal-interval-seconds`): each expected client counts for
    /// `60 s / interval` renewals a minute toward the self-preservation threshold. An instance
    /// is expected to renew once it has proved its client alive, renewing at least this long
    /// after it registered; until then, self-preservation does not keep it once it expires.
    /// Default 30 s; whole seconds, at least one.
    pub fn expected_client_renewal_interval(mut self, interval: Duration) -> Self {
        self.config.expected_client_renewal_interval_secs =
            u32::try_from(interval.as_secs()).unwrap_or(u32::MAX);
        self
    }

    /// The number of clients expected to renew before any registers. Default 1 (Spring's
    /// `expected-number-of-clients-sending-renews`).
    pub fn expected_clients(mut self, count: u32) -> Self {
        self.config.expected_clients = count;
        self
    }

    /// Whether reads go through the read-only cache level, refreshed on a timer. Default on;
    /// switch it off so reads see changes immediately.
    pub fn read_only_cache(mut self, enabled: bool) -> Self {
        self.config.read_only_cache = enabled;
        self
    }

    /// How often the read-only cache is refreshed. Default 30 s.
    pub fn response_cache_update_interval(mut self, interval: Duration) -> Self {
        self.config.cache_update_interval = interval;
        self
    }

    /// How long the delta queue keeps changes. Default 3 min.
    pub fn delta_retention(mut self, retention: Duration) -> Self {
        self.config.delta_retention = retention;
        self
    }

    /// Whether leases expire like Netflix Eureka's (two durations after the last renewal) or
    /// exactly one duration after it. Default Netflix-compatible.
    pub fn netflix_lease_expiry(mut self, enabled: bool) -> Self {
        self.config.netflix_expiry = enabled;
        self
    }

    /// Bounds for client lease durations and renewal intervals; values outside are clamped.
    /// Default 1 s ..= 1 h.
    pub fn lease_duration_bounds(mut self, min: Duration, max: Duration) -> Self {
        self.config.limits.lease_min_secs = u32::try_from(min.as_secs()).unwrap_or(u32::MAX);
        self.config.limits.lease_max_secs = u32::try_from(max.as_secs()).unwrap_or(u32::MAX);
        self
    }

    /// The largest accepted request body. Default 1 MiB; larger bodies get 413.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.config.limits.body_bytes = bytes;
        self
    }

    /// The most metadata entries per instance. Default 128.
    pub fn max_metadata_entries(mut self, entries: usize) -> Self {
        self.config.limits.metadata_entries = entries;
        self
    }

    /// The longest application name or instance id. Default 256 bytes.
    pub fn max_name_length(mut self, bytes: usize) -> Self {
        self.config.limits.name_len = bytes;
        self
    }

    /// How far ahead of this registry's clock a `lastDirtyTimestamp` may lie and still keep
    /// the instance's copy against registrations with an earlier one (Eureka keeps the copy
    /// with the later timestamp). Default 5 minutes. A copy written with a timestamp further
    /// ahead is taken, as Eureka takes it, so a client whose clock runs fast registers and
    /// renews, but it holds that way for this long only: one request with a forged future
    /// timestamp cannot pin a record against the instance's later registrations.
    pub fn max_clock_skew(mut self, skew: Duration) -> Self {
        self.config.limits.max_clock_skew_ms = u64::try_from(skew.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// Registrations admitted per client address: a burst, then a steady rate per second
    /// (429 with `Retry-After` beyond). Default 200 then 100/s; `None` disables the limit.
    pub fn registration_rate_limit(mut self, limit: Option<(u32, u32)>) -> Self {
        self.config.registration_rate =
            limit.map(|(burst, per_second)| RateLimit { burst, per_second });
        self
    }

    /// Bytes of registrations admitted per client address: a burst, then a steady rate per
    /// second (429 with `Retry-After` beyond), each registration counting its body's size, so
    /// one address cannot churn large instances as fast as small ones. Default 8 MiB then
    /// 1 MiB/s; `None` disables the limit.
    pub fn registration_bytes_limit(mut self, limit: Option<(u32, u32)>) -> Self {
        self.config.registration_bytes_rate =
            limit.map(|(burst, per_second)| RateLimit { burst, per_second });
        self
    }

    /// The most bytes one instance may take in a registry document (as JSON, with the lease the
    /// registry adds). Default 64 KiB; a registration or metadata update past it gets 413 naming
    /// the limit.
    pub fn max_instance_bytes(mut self, bytes: usize) -> Self {
        self.config.limits.instance_bytes = bytes;
        self
    }

    /// The most bytes the registry's instances may take together in a registry document (as
    /// JSON). Default 30 MiB, so that every client reads the whole registry within
    /// feign-eureka's default cap of 32 MiB; a registration that would pass it gets 413 naming
    /// the limit, and the delta queue keeps what it shows within it too. Raise it together with
    /// the clients' `max_registry_bytes`.
    pub fn max_registry_bytes(mut self, bytes: usize) -> Self {
        self.config.limits.registry_bytes = bytes;
        self
    }

    /// The most instances the registry holds. Default 100,000; a new registration past it gets
    /// 413 naming the limit (re-registrations of held instances are taken).
    pub fn max_instances(mut self, instances: usize) -> Self {
        self.config.limits.instances = instances;
        self
    }

    /// Metadata updates (`PUT apps/{app}/{id}/metadata`) admitted per instance: a burst, then a
    /// steady rate per second (429 with `Retry-After` beyond). Each update stores a new copy of
    /// the instance, so the limit is per instance rather than per client address: one client
    /// may look after many instances, and many addresses may update one. Default 10 then 1/s;
    /// `None` disables the limit.
    pub fn metadata_rate_limit(mut self, limit: Option<(u32, u32)>) -> Self {
        self.config.metadata_rate =
            limit.map(|(burst, per_second)| RateLimit { burst, per_second });
        self
    }

    /// Adds a peer registry's service URL (e.g. `http://10.0.0.2:8761/eureka/`). Changes are
    /// replicated to every peer asynchronously; this server's own URL is ignored.
    ///
    /// Only a peer replicates to this server: a request counts as a peer's when it carries the
    /// [peer credentials](EurekaServerBuilder::peer_credentials), when it comes over mutual TLS
    /// with a client certificate valid for a peer URL's host, or when it comes from an address
    /// a peer URL's host resolves to (resolved again, at most once a second, when a request
    /// claiming to replicate comes from an unknown address, so a peer that moved is known again
    /// without a restart). From anyone else the replication header means nothing and a batch
    /// gets 403, unless the server takes [replication from any
    /// address](EurekaServerBuilder::replication_from_any_address).
    pub fn peer(mut self, url: impl Into<String>) -> Self {
        self.config.peers.push(url.into());
        self
    }

    /// Adds several peers (see [`EurekaServerBuilder::peer`]).
    pub fn peers<I, S>(mut self, urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config.peers.extend(urls.into_iter().map(Into::into));
        self
    }

    /// How long replication waits to fill a batch. Default 500 ms.
    pub fn replication_delay(mut self, delay: Duration) -> Self {
        self.config.replication_delay = delay;
        self
    }

    /// Requires HTTP basic auth with `username` and `password` on every request, the dashboard
    /// included (as Spring Security's basic auth in front of a Eureka server): others get 401
    /// with `WWW-Authenticate`. Peers then need the credentials in their URLs
    /// (`http://user:password@host:8761/eureka/`), which replication sends as basic auth.
    pub fn credentials(mut self, username: impl Into<String>, password: impl Into<String>) -> Self {
        self.config.credentials = Some(feign_core::redact::Credentials::new(username, password));
        self
    }

    /// The credentials that make a request a peer's, whatever address it comes from: the
    /// replication header counts and batches are taken on a request carrying them (HTTP basic
    /// auth, checked in constant time; wrong ones count toward the throttle of wrong
    /// credentials). Peers send them from the user info of the URL this server is in their peer
    /// list under (`http://peer:password@host:8761/eureka/`). With
    /// [`credentials`](EurekaServerBuilder::credentials) too, both are admitted, so clients
    /// holding the registry's credentials cannot replicate. Default: none; a request is then a
    /// peer's by its client certificate or its address (see
    /// [`peer`](EurekaServerBuilder::peer)).
    pub fn peer_credentials(
        mut self,
        username: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.config.peer_credentials =
            Some(feign_core::redact::Credentials::new(username, password));
        self
    }

    /// Takes replication from any address, as Netflix's Eureka server does: every request that
    /// passes the credentials (when the registry has them) may carry the replication header
    /// (skipping the status override rules and the replication onward) and post batches.
    /// Default off: only a peer replicates (see [`peer`](EurekaServerBuilder::peer)).
    pub fn replication_from_any_address(mut self, any: bool) -> Self {
        self.config.replication_from_any_address = any;
        self
    }

    /// TLS settings for this server's requests to its `https://` peers (replication and the
    /// start-up copy): the CA their certificates are checked against and the client identity
    /// shown to peers that require one, as the Eureka client takes them
    /// ([`EurekaClientBuilder::tls`](feign_eureka::EurekaClientBuilder::tls)). A peer that
    /// requires client certificates knows this server by that identity when it is valid for
    /// the host of this server's URL in the peer's list. Default: the system's roots, no client
    /// certificate. A file that cannot be read or used fails the start with
    /// [`ServerError::PeerClient`].
    pub fn peer_tls(mut self, tls: feign_core::transport::Tls) -> Self {
        self.config.peer_tls = Some(tls);
        self
    }

    /// The resolver of the peers' host names, both to reach them and to know their requests by
    /// address. Default: the system's (`getaddrinfo` on a blocking thread).
    pub fn peer_resolver<R>(mut self, resolver: R) -> Self
    where
        R: reqwest::dns::Resolve + 'static,
    {
        self.config.peer_resolver = Some(peers::PeerResolver(Arc::new(resolver)));
        self
    }

    /// Serves HTTPS with `cert_pem` (the server's certificate, then its chain) and `key_pem`
    /// (PKCS#8, PKCS#1 or SEC1, not encrypted), both PEM: TLS 1.2 and 1.3 by rustls's safe
    /// defaults. [`EurekaServerBuilder::start`] fails with [`ServerError::Tls`] when they cannot
    /// be read or do not belong together. Peers and clients then use `https://` URLs; this
    /// server checks its HTTPS peers' certificates against the system's roots, or as
    /// [`peer_tls`](EurekaServerBuilder::peer_tls) says.
    pub fn tls_pem(mut self, cert_pem: impl Into<Vec<u8>>, key_pem: impl Into<Vec<u8>>) -> Self {
        let client_ca = self.config.tls.take().and_then(|t| t.client_ca);
        self.config.tls = Some(tls::TlsPem {
            cert: cert_pem.into(),
            key: key_pem.into(),
            client_ca,
        });
        self
    }

    /// Requires mutual TLS: every client (and peer) must show a certificate signed by one of
    /// the CAs in `ca_pem`; a connection without one fails its handshake. Only with
    /// [`EurekaServerBuilder::tls_pem`], called before or after; default: no client
    /// certificate asked for. An unusable CA PEM fails the start with [`ServerError::Tls`].
    pub fn tls_client_ca_pem(mut self, ca_pem: impl Into<Vec<u8>>) -> Self {
        match &mut self.config.tls {
            Some(tls) => tls.client_ca = Some(ca_pem.into()),
            None => {
                self.config.tls = Some(tls::TlsPem {
                    cert: Vec::new(),
                    key: Vec::new(),
                    client_ca: Some(ca_pem.into()),
                });
            }
        }
        self
    }

    /// Whether a server with peers copies a peer's registry before it serves (Eureka's start-up
    /// sync). Default on: the first peer that answers within the replication timeout (5 s) is
    /// copied; when none does, the server starts empty and fills up from heartbeats.
    pub fn startup_sync(mut self, enabled: bool) -> Self {
        self.config.startup_sync = enabled;
        self
    }

    /// How long a client may take to send a request's header, from its first byte to its
    /// last; a slower client's connection is closed. Default 10 s.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.config.header_read_timeout = timeout;
        self
    }

    /// How long a client may take to send a request's body, from the end of its head to the
    /// body's last byte, however steadily the bytes come; a slower client's connection is
    /// closed, and while it waits for the body it may be closed to make room at the
    /// [connection cap](EurekaServerBuilder::max_connections). Default 10 s (a body is at most
    /// the [body limit](EurekaServerBuilder::body_limit), 1 MiB by default).
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.config.body_read_timeout = timeout;
        self
    }

    /// The least a client must take of a response: after `grace`, its bytes must have left at
    /// `bytes_per_second` on average, or the connection is closed (Kestrel's
    /// `MinResponseDataRate`). A connection whose client does not take its response may be
    /// closed to make room at the [connection cap](EurekaServerBuilder::max_connections).
    /// Default 64 KiB/s after 10 s: the largest registry a client can read (32 MiB) then takes
    /// at most about 9 minutes.
    pub fn min_response_rate(mut self, bytes_per_second: u64, grace: Duration) -> Self {
        self.config.min_response_rate = bytes_per_second;
        self.config.response_grace = grace;
        self
    }

    /// How long a connection may stay open without a request, after it is accepted or after
    /// its last response; then it is closed. Default 60 s (Eureka clients renew every 30 s).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.config.idle_timeout = timeout;
        self
    }

    /// The most connections open at once. Default 8,192 (Tomcat's, which Spring's Eureka server
    /// runs on). A connection beyond it, or beyond the file descriptors the process may open,
    /// closes the connection idle the longest instead of being refused; it is refused only
    /// when every open connection is answering a request.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.config.max_connections = connections;
        self
    }

    /// The most watches of push discovery (`GET /eureka/watch`, a long poll that answers as
    /// soon as the registry changes) waiting at once. Default 1,024, and never more than half
    /// the [connection cap](EurekaServerBuilder::max_connections), since each holds a
    /// connection; a watch beyond it is answered 429 at once and its client polls instead.
    /// Zero turns the watch off: fetches no longer offer it and `GET /eureka/watch` is 404, as
    /// on any other Eureka server.
    pub fn max_watchers(mut self, watchers: usize) -> Self {
        self.config.max_watchers = watchers;
        self
    }

    /// How long [`EurekaServer::shutdown`] waits for in-flight requests. Default 10 s.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.config.shutdown_grace = grace;
        self
    }

    fn check(&self) -> Result<(), ServerError> {
        let c = &self.config;
        if !(c.renewal_percent_threshold > 0.0 && c.renewal_percent_threshold <= 1.0) {
            return Err(ServerError::InvalidSetting(
                "renewal percent threshold must be in (0, 1]",
            ));
        }
        let intervals = [
            c.eviction_interval,
            c.cache_update_interval,
            c.renewal_threshold_update_interval,
            c.delta_retention_interval,
            c.header_read_timeout,
            c.body_read_timeout,
            c.idle_timeout,
        ];
        if intervals.iter().any(Duration::is_zero) {
            return Err(ServerError::InvalidSetting(
                "intervals must be longer than zero",
            ));
        }
        if c.limits.instance_bytes == 0 || c.limits.registry_bytes == 0 || c.limits.instances == 0 {
            return Err(ServerError::InvalidSetting(
                "the instance, registry and instance-count limits must be at least 1",
            ));
        }
        if c.expected_client_renewal_interval_secs == 0 {
            return Err(ServerError::InvalidSetting(
                "the expected client renewal interval must be at least a second",
            ));
        }
        if c.min_response_rate == 0 {
            return Err(ServerError::InvalidSetting(
                "the minimum response rate must be at least 1 byte a second",
            ));
        }
        if c.max_connections == 0 {
            return Err(ServerError::InvalidSetting(
                "the connection cap must be at least 1",
            ));
        }
        if [&c.credentials, &c.peer_credentials]
            .into_iter()
            .flatten()
            .any(|c| c.basic_authorization().is_none())
        {
            return Err(ServerError::InvalidSetting(
                "credentials must not contain control characters",
            ));
        }
        if c.limits.lease_min_secs == 0 || c.limits.lease_min_secs > c.limits.lease_max_secs {
            return Err(ServerError::InvalidSetting(
                "lease bounds must satisfy 1 s <= min <= max",
            ));
        }
        Ok(())
    }

    /// Binds the listener, starts the background tasks and serves.
    pub async fn start(self) -> Result<EurekaServer, ServerError> {
        self.check()?;
        let mut config = self.config;
        let tls = config
            .tls
            .as_ref()
            .map(tls::acceptor)
            .transpose()
            .map_err(ServerError::Tls)?;
        let addr: SocketAddr = tokio::net::lookup_host(config.bind.as_str())
            .await
            .ok()
            .and_then(|mut addrs| addrs.next())
            .ok_or_else(|| ServerError::InvalidBindAddress(config.bind.clone()))?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServerError::Bind {
                addr: config.bind.clone(),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Bind {
            addr: config.bind.clone(),
            source,
        })?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{addr}/eureka/");
        config.peers = peer_urls(&config.peers, addr)?;
        let auth = config.credentials.as_ref().and_then(auth::BasicAuth::new);
        let peer_auth = config
            .peer_credentials
            .as_ref()
            .and_then(auth::BasicAuth::new);
        let peer_client = replication::peer_client(&config).map_err(ServerError::PeerClient)?;
        let config = Arc::new(config);
        let clock = feign_core::clock::Clock::new();
        let (replicator, queues) = Replicator::new(&config.peers, config.replication_queue);
        let registry = Arc::new(Registry::new(config.clone(), clock, replicator));
        if config.startup_sync && !config.peers.is_empty() {
            let timeout = config.replication_timeout;
            peer_sync::copy_from_peers(&registry, &peer_client, &config.peers, timeout).await;
        }
        let offload = offload::Offload::per_core();
        let mut background = replication::spawn_workers(&registry, queues, &config, &peer_client);
        background.extend(tasks::spawn(&registry, &offload));
        let state = Arc::new(AppState {
            limiter: config.registration_rate.map(RateLimiter::new),
            bytes_limiter: config.registration_bytes_rate.map(RateLimiter::new),
            metadata_limiter: config.metadata_rate.map(RateLimiter::new),
            shutting_down: AtomicBool::new(false),
            started_ms: clock.now_ms(),
            url,
            registry,
            peers: peers::Peers::new(
                &config.peers,
                config.peer_resolver.clone(),
                config.replication_from_any_address,
            )
            .await,
            dashboard: listing::ListingCache::default(),
            // Watches hold their connections: at most half the cap, so they cannot take all.
            watches: watch::Watches::new(config.max_watchers.min(config.max_connections / 2)),
            offload,
        });
        if auth.is_none() && !addr.ip().is_loopback() {
            tracing::warn!(
                %addr,
                "the registry listens beyond loopback without credentials: anyone who reaches it \
                 can register, cancel or override instances"
            );
        }
        let router = Router::new()
            .route("/", get(dashboard::page))
            .route("/eureka/{*rest}", any(api::handle))
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(auth::Gate::new(auth, peer_auth, clock)),
                auth::require,
            ))
            .with_state(state.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        let limits = listen::ConnectionLimits {
            timeouts: conn::Timeouts {
                header_read: config.header_read_timeout,
                idle: config.idle_timeout,
                body_read: config.body_read_timeout,
                send: conn::SendRate {
                    bytes_per_second: config.min_response_rate,
                    grace: config.response_grace,
                },
            },
            max_connections: config.max_connections,
            tls,
        };
        let serve = tokio::spawn(listen::serve(listener, router, limits, stopped));
        tracing::info!(url = %state.url, "eureka registry listening");
        Ok(EurekaServer {
            grace: config.shutdown_grace,
            state,
            addr,
            stop: Some(stop),
            serve: Some(serve),
            background,
        })
    }
}

/// Normalizes peer URLs (trailing `/`), rejects bad ones and drops this server's own.
fn peer_urls(peers: &[String], own: SocketAddr) -> Result<Vec<String>, ServerError> {
    let mut out: Vec<String> = Vec::new();
    for raw in peers {
        // The error names the URL without the password it may hold.
        let invalid = || ServerError::InvalidPeerUrl(feign_core::redact::url(raw).to_string());
        let parsed = url::Url::parse(raw).map_err(|_| invalid())?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(invalid());
        }
        let same_port = parsed.port_or_known_default() == Some(own.port());
        let host = parsed.host_str().unwrap_or_default();
        let loopback = matches!(host, "localhost" | "127.0.0.1" | "[::1]");
        if same_port && (host == own.ip().to_string() || (loopback && own.ip().is_loopback())) {
            continue;
        }
        let mut url = raw.clone();
        if !url.ends_with('/') {
            url.push('/');
        }
        if !out.contains(&url) {
            out.push(url);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_bind_address_is_loopback_only() {
        assert_eq!(EurekaServer::builder().config.bind, "127.0.0.1:8761");
    }

    #[test]
    fn peer_urls_are_normalized_and_exclude_this_server() {
        let own: SocketAddr = "127.0.0.1:8761".parse().unwrap();
        let peers = [
            "http://localhost:8761/eureka/".to_owned(),
            "http://10.0.0.2:8761/eureka".to_owned(),
            "http://10.0.0.2:8761/eureka/".to_owned(),
        ];
        assert_eq!(
            peer_urls(&peers, own).unwrap(),
            ["http://10.0.0.2:8761/eureka/"]
        );
        assert!(peer_urls(&["ftp://x/".to_owned()], own).is_err());
        assert!(peer_urls(&["not a url".to_owned()], own).is_err());
    }

    #[tokio::test]
    async fn out_of_range_settings_are_refused() {
        let zero = EurekaServer::builder()
            .bind("127.0.0.1:0")
            .eviction_interval(Duration::ZERO)
            .start()
            .await;
        assert!(matches!(zero, Err(ServerError::InvalidSetting(_))));
        let threshold = EurekaServer::builder()
            .bind("127.0.0.1:0")
            .renewal_percent_threshold(1.5)
            .start()
            .await;
        assert!(matches!(threshold, Err(ServerError::InvalidSetting(_))));
        let bind = EurekaServer::builder().bind("nowhere").start().await;
        assert!(matches!(bind, Err(ServerError::InvalidBindAddress(_))));
    }
}
