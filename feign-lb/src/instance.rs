//! `ServiceInstance`: one running copy of a service, as discovery reports it.
//!
//! CONTRACT (fixed): shared with feign-eureka; may grow, must not change.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// One instance of a service: where it listens and what its registration says about it.
///
/// Cheap to clone (its strings are shared).
#[derive(Clone, PartialEq, Eq)]
pub struct ServiceInstance {
    service_id: Arc<str>,
    instance_id: Arc<str>,
    host: Arc<str>,
    port: u16,
    secure: bool,
    metadata: Arc<BTreeMap<String, String>>,
    base_url: Arc<str>,
    health_check_url: Option<Arc<str>>,
}

impl ServiceInstance {
    /// An instance of `service_id` at `host:port`, plain HTTP, no metadata, whose instance id is
    /// `host:port`.
    pub fn new(service_id: impl Into<Arc<str>>, host: impl Into<Arc<str>>, port: u16) -> Self {
        let host = host.into();
        let instance_id: Arc<str> = format!("{host}:{port}").into();
        let mut instance = ServiceInstance {
            service_id: service_id.into(),
            instance_id,
            host,
            port,
            secure: false,
            metadata: Arc::default(),
            base_url: Arc::from(""),
            health_check_url: None,
        };
        instance.base_url = instance.make_base_url();
        instance
    }

    /// An instance with all its parts given at once, each string allocated once: how a
    /// registry of thousands of instances builds them ([`ServiceInstance::new`] and the `with_*`
    /// setters rebuild what they change). `metadata` may be shared with other instances.
    pub fn from_parts(
        service_id: Arc<str>,
        instance_id: Arc<str>,
        host: &str,
        port: u16,
        secure: bool,
        metadata: Arc<BTreeMap<String, String>>,
    ) -> Self {
        ServiceInstance {
            base_url: base_url(host, port, secure),
            service_id,
            instance_id,
            host: Arc::from(host),
            port,
            secure,
            metadata,
            health_check_url: None,
        }
    }

    /// Sets the instance id (Eureka's `instanceId`).
    #[must_use]
    pub fn with_instance_id(mut self, instance_id: impl Into<Arc<str>>) -> Self {
        self.instance_id = instance_id.into();
        self
    }

    /// Marks the instance as HTTPS.
    #[must_use]
    pub fn with_secure(mut self, secure: bool) -> Self {
        self.secure = secure;
        self.base_url = self.make_base_url();
        self
    }

    /// Adds one metadata entry (`zone`, `version`, `canary`, `weight`, `hint`, ...).
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.metadata).insert(key.into(), value.into());
        self
    }

    /// Replaces the metadata map.
    #[must_use]
    pub fn with_metadata_map(self, metadata: BTreeMap<String, String>) -> Self {
        self.with_shared_metadata(Arc::new(metadata))
    }

    /// Sets the URL the instance registered for its health checks (Eureka's `healthCheckUrl`,
    /// which a Spring Boot application points at its management port):
    /// [`HealthCheckSupplier`](crate::HealthCheckSupplier) checks it rather than a path on the
    /// instance's port, unless a path or port was configured for the checks. Only its scheme,
    /// port, path and query are used, on the instance's own host: a registration cannot send
    /// checks to another address.
    #[must_use]
    pub fn with_health_check_url(mut self, url: impl Into<Arc<str>>) -> Self {
        self.health_check_url = Some(url.into());
        self
    }

    /// Replaces the metadata map with one shared with other instances (a registry whose
    /// instances carry the same metadata keeps a single copy of it).
    #[must_use]
    pub fn with_shared_metadata(mut self, metadata: Arc<BTreeMap<String, String>>) -> Self {
        self.metadata = metadata;
        self
    }

    /// The service id, e.g. `order-service`.
    pub fn service_id(&self) -> &str {
        &self.service_id
    }

    /// The instance id, unique within the service.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    /// The instance id as a shared string (no allocation to hand out).
    pub fn instance_id_arc(&self) -> &Arc<str> {
        &self.instance_id
    }

    /// Host name or IP address.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether calls use HTTPS.
    pub fn is_secure(&self) -> bool {
        self.secure
    }

    /// The metadata map.
    pub fn metadata(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    /// The `zone` metadata entry, if any.
    pub fn zone(&self) -> Option<&str> {
        self.metadata.get("zone").map(String::as_str)
    }

    /// `http://host:port` or `https://host:port` (IPv6 hosts in brackets), computed once.
    pub fn base_url(&self) -> &Arc<str> {
        &self.base_url
    }

    /// The URL the instance registered for its health checks, if any (see
    /// [`ServiceInstance::with_health_check_url`]).
    pub fn health_check_url(&self) -> Option<&str> {
        self.health_check_url.as_deref()
    }

    fn make_base_url(&self) -> Arc<str> {
        base_url(&self.host, self.port, self.secure)
    }
}

/// `http://host:port` or `https://host:port`, an IPv6 host in brackets. Written piece by piece
/// into a buffer on the stack when the host is short enough, which it nearly always is:
/// registries build thousands of these at a time, and `format!` costs a temporary `String` (an
/// allocation freed at once) and its formatting machinery per instance.
fn base_url(host: &str, port: u16, secure: bool) -> Arc<str> {
    let scheme = if secure { "https://" } else { "http://" };
    let (open, close) = if host.contains(':') && !host.starts_with('[') {
        ("[", "]")
    } else {
        ("", "")
    };
    let mut digits = [0u8; 5];
    let mut start = digits.len();
    let mut rest = port;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let pieces = [scheme, open, host, close, ":"];
    let mut buffer = [0u8; 128];
    let mut len = 0;
    for piece in pieces
        .iter()
        .map(|p| p.as_bytes())
        .chain([&digits[start..]])
    {
        let Some(slot) = buffer.get_mut(len..len + piece.len()) else {
            return format!("{scheme}{open}{host}{close}:{port}").into();
        };
        slot.copy_from_slice(piece);
        len += piece.len();
    }
    // Only whole UTF-8 strings and ASCII digits were copied in, so this always reads.
    match std::str::from_utf8(&buffer[..len]) {
        Ok(url) => Arc::from(url),
        Err(_) => format!("{scheme}{open}{host}{close}:{port}").into(),
    }
}

impl fmt::Debug for ServiceInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceInstance")
            .field("service_id", &self.service_id)
            .field("instance_id", &self.instance_id)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("secure", &self.secure)
            .field("metadata", &self.metadata)
            .field("health_check_url", &self.health_check_url)
            .finish()
    }
}
