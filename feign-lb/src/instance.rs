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
        };
        instance.base_url = instance.make_base_url();
        instance
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
    pub fn with_metadata_map(mut self, metadata: BTreeMap<String, String>) -> Self {
        self.metadata = Arc::new(metadata);
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

    fn make_base_url(&self) -> Arc<str> {
        let scheme = if self.secure { "https" } else { "http" };
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("{scheme}://[{}]:{}", self.host, self.port).into()
        } else {
            format!("{scheme}://{}:{}", self.host, self.port).into()
        }
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
            .finish()
    }
}
