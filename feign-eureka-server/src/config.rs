//! Server settings and their defaults.

use std::time::Duration;

/// Limits applied to client input; every violation is answered 400 or 413 with a reason.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    pub(crate) body_bytes: usize,
    pub(crate) metadata_entries: usize,
    pub(crate) metadata_key_len: usize,
    pub(crate) metadata_value_len: usize,
    pub(crate) name_len: usize,
    pub(crate) field_len: usize,
    pub(crate) lease_min_secs: u32,
    pub(crate) lease_max_secs: u32,
    /// How long a copy written with a `lastDirtyTimestamp` ahead of the clock by more than
    /// this holds against earlier ones (clock skew between machines).
    pub(crate) max_clock_skew_ms: u64,
    /// The most bytes one instance may take in a registry document.
    pub(crate) instance_bytes: usize,
    /// The most bytes the registry's instances may take together in a registry document.
    pub(crate) registry_bytes: usize,
    /// The most instances the registry holds.
    pub(crate) instances: usize,
}

impl Limits {
    /// The most XML elements a registration may hold: its own fields (about 40) and its two
    /// metadata maps at their largest, with room to spare.
    pub(crate) fn xml_elements(&self) -> usize {
        self.metadata_entries.saturating_mul(2).saturating_add(128)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            body_bytes: 1024 * 1024,
            metadata_entries: 128,
            metadata_key_len: 256,
            metadata_value_len: 4096,
            name_len: 256,
            field_len: 2048,
            lease_min_secs: 1,
            lease_max_secs: 3600,
            max_clock_skew_ms: 5 * 60 * 1000,
            instance_bytes: 64 * 1024,
            registry_bytes: 30 * 1024 * 1024,
            instances: 100_000,
        }
    }
}

/// Token bucket settings: registrations per client address, metadata updates per instance.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RateLimit {
    pub(crate) burst: u32,
    pub(crate) per_second: u32,
}

/// Everything the registry and its HTTP front end can be told.
#[derive(Debug, Clone)]
pub(crate) struct ServerConfig {
    pub(crate) bind: String,
    pub(crate) eviction_interval: Duration,
    pub(crate) self_preservation: bool,
    pub(crate) renewal_percent_threshold: f64,
    pub(crate) renewal_threshold_update_interval: Duration,
    pub(crate) expected_client_renewal_interval_secs: u32,
    pub(crate) expected_clients: u32,
    pub(crate) read_only_cache: bool,
    pub(crate) cache_update_interval: Duration,
    pub(crate) cache_expiry: Duration,
    pub(crate) delta_retention: Duration,
    pub(crate) delta_retention_interval: Duration,
    pub(crate) netflix_expiry: bool,
    pub(crate) limits: Limits,
    pub(crate) registration_rate: Option<RateLimit>,
    /// Bytes of registrations admitted per client address (the burst and rate in bytes).
    pub(crate) registration_bytes_rate: Option<RateLimit>,
    pub(crate) metadata_rate: Option<RateLimit>,
    pub(crate) peers: Vec<String>,
    pub(crate) replication_batch_size: usize,
    pub(crate) replication_delay: Duration,
    pub(crate) replication_timeout: Duration,
    pub(crate) startup_sync: bool,
    /// User name and password every request must carry (HTTP basic auth).
    pub(crate) credentials: Option<feign_core::redact::Credentials>,
    /// The credentials that mark a request as a peer's (and are admitted like `credentials`).
    pub(crate) peer_credentials: Option<feign_core::redact::Credentials>,
    /// Whether the replication header and batches count from any address (Netflix's rule).
    pub(crate) replication_from_any_address: bool,
    /// TLS settings for this server's requests to its https peers.
    pub(crate) peer_tls: Option<feign_core::transport::Tls>,
    /// The resolver of the peers' host names, to reach them and to know them.
    pub(crate) peer_resolver: Option<crate::peers::PeerResolver>,
    /// The certificate chain and key to serve HTTPS with.
    pub(crate) tls: Option<crate::tls::TlsPem>,
    pub(crate) replication_queue: usize,
    pub(crate) shutdown_grace: Duration,
    pub(crate) header_read_timeout: Duration,
    /// From the end of a request's head to the last byte of its body.
    pub(crate) body_read_timeout: Duration,
    /// The least average rate, in bytes a second, at which a response must leave once the
    /// grace period is over.
    pub(crate) min_response_rate: u64,
    pub(crate) response_grace: Duration,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_connections: usize,
    /// The most watches (`GET watch`) waiting at once; zero turns the watch off.
    pub(crate) max_watchers: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8761".to_owned(),
            eviction_interval: Duration::from_secs(60),
            self_preservation: true,
            renewal_percent_threshold: 0.85,
            renewal_threshold_update_interval: Duration::from_secs(15 * 60),
            expected_client_renewal_interval_secs: 30,
            expected_clients: 1,
            read_only_cache: true,
            cache_update_interval: Duration::from_secs(30),
            cache_expiry: Duration::from_secs(180),
            delta_retention: Duration::from_secs(180),
            delta_retention_interval: Duration::from_secs(30),
            netflix_expiry: true,
            limits: Limits::default(),
            registration_rate: Some(RateLimit {
                burst: 200,
                per_second: 100,
            }),
            registration_bytes_rate: Some(RateLimit {
                burst: 8 * 1024 * 1024,
                per_second: 1024 * 1024,
            }),
            metadata_rate: Some(RateLimit {
                burst: 10,
                per_second: 1,
            }),
            peers: Vec::new(),
            replication_batch_size: 250,
            replication_delay: Duration::from_millis(500),
            replication_timeout: Duration::from_secs(5),
            startup_sync: true,
            credentials: None,
            peer_credentials: None,
            replication_from_any_address: false,
            peer_tls: None,
            peer_resolver: None,
            tls: None,
            replication_queue: 10_000,
            shutdown_grace: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(10),
            min_response_rate: 64 * 1024,
            response_grace: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 8192,
            max_watchers: 1024,
        }
    }
}
