//! `InstanceConfig`: what this service registers about itself.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Duration;

use crate::model::{DataCenterInfo, InstanceInfo, InstanceStatus, LeaseInfo, PortInfo};

use super::Error;

/// The registration of this service: name, address, ports, metadata, lease settings.
///
/// Defaults follow Spring Cloud: instance id `{host}:{app}:{port}`, `vipAddress` and
/// `secureVipAddress` = the application name, secure port 443 disabled, lease 30 s / 90 s, home
/// page `http://{host}:{port}/`, status page `/info`, health check `/health`, initial status
/// `UP`.
///
/// Which address callers are given depends on the constructor:
///
/// - [`InstanceConfig::bound_to`] registers the address the service's listener is bound to
///   (the detected IP when it is bound to every interface) and tells callers to connect by IP.
///   Use it when you have the bound `SocketAddr`: a service bound to `127.0.0.1` is then
///   reachable by callers on this machine.
/// - [`InstanceConfig::new`] registers the machine's host name (`HOSTNAME`, else
///   `/etc/hostname`, else `localhost`) as Spring Cloud does, and as IP address the one the
///   machine would use for outgoing traffic (found without sending anything; `127.0.0.1` when
///   there is none). Callers connect to the host name, so the service must listen on the
///   interface that name resolves to: a service bound to `127.0.0.1` is unreachable through it
///   unless the name resolves to `127.0.0.1`.
///   Set [`ip_address`](InstanceConfig::ip_address) and
///   [`prefer_ip_address`](InstanceConfig::prefer_ip_address) to choose otherwise.
///
/// ```
/// use feign_eureka::InstanceConfig;
///
/// let config = InstanceConfig::new("order-service", 8080)
///     .ip_address("10.0.0.5")
///     .prefer_ip_address(true)
///     .metadata("zone", "zone-a")
///     .metadata("version", "2.1.0");
/// assert_eq!(config.resolved_instance_id(), "10.0.0.5:order-service:8080");
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct InstanceConfig {
    app_name: String,
    port: u16,
    non_secure_port_enabled: bool,
    secure_port: u16,
    secure_port_enabled: bool,
    host_name: Option<String>,
    ip_address: Option<String>,
    prefer_ip_address: bool,
    instance_id: Option<String>,
    metadata: BTreeMap<String, String>,
    vip_address: Option<String>,
    secure_vip_address: Option<String>,
    home_page_url: Option<String>,
    status_page_url: Option<String>,
    health_check_url: Option<String>,
    status_page_path: String,
    health_check_path: String,
    lease_renewal_interval: Duration,
    lease_expiration_duration: Duration,
    initial_status: InstanceStatus,
    app_group_name: Option<String>,
    data_center: DataCenterInfo,
}

impl InstanceConfig {
    /// Registers `app_name` (e.g. `order-service`; Eureka stores it upper-case) listening on
    /// plain-HTTP `port`.
    pub fn new(app_name: impl Into<String>, port: u16) -> Self {
        InstanceConfig {
            app_name: app_name.into(),
            port,
            non_secure_port_enabled: true,
            secure_port: 443,
            secure_port_enabled: false,
            host_name: None,
            ip_address: None,
            prefer_ip_address: false,
            instance_id: None,
            metadata: BTreeMap::new(),
            vip_address: None,
            secure_vip_address: None,
            home_page_url: None,
            status_page_url: None,
            health_check_url: None,
            status_page_path: "/info".to_owned(),
            health_check_path: "/health".to_owned(),
            lease_renewal_interval: Duration::from_secs(30),
            lease_expiration_duration: Duration::from_secs(90),
            initial_status: InstanceStatus::Up,
            app_group_name: None,
            data_center: DataCenterInfo::my_own(),
        }
    }

    /// Registers `app_name` listening on `addr`, the address its listener is bound to (e.g.
    /// `listener.local_addr()?`): the IP and port of `addr`, with
    /// [`prefer_ip_address`](InstanceConfig::prefer_ip_address) on, so callers connect to
    /// exactly the address the service accepts connections on. When `addr` is unspecified
    /// (`0.0.0.0` or `::`, every interface), the detected IP is registered instead, as
    /// [`new`](InstanceConfig::new) does.
    ///
    /// ```
    /// use feign_eureka::InstanceConfig;
    ///
    /// let config = InstanceConfig::bound_to("order-service", "127.0.0.1:8080".parse().unwrap());
    /// assert_eq!(config.resolved_host(), "127.0.0.1");
    /// assert_eq!(config.resolved_instance_id(), "127.0.0.1:order-service:8080");
    /// ```
    pub fn bound_to(app_name: impl Into<String>, addr: SocketAddr) -> Self {
        let config = InstanceConfig::new(app_name, addr.port()).prefer_ip_address(true);
        if addr.ip().is_unspecified() {
            config
        } else {
            config.ip_address(addr.ip().to_string())
        }
    }

    /// The host name to register (default: the machine's host name).
    pub fn host_name(mut self, host_name: impl Into<String>) -> Self {
        self.host_name = Some(host_name.into());
        self
    }

    /// The IP address to register (default: detected).
    pub fn ip_address(mut self, ip: impl Into<String>) -> Self {
        self.ip_address = Some(ip.into());
        self
    }

    /// Registers the IP address as the host name, so callers connect by IP (default `false`;
    /// Spring's `eureka.instance.prefer-ip-address`).
    pub fn prefer_ip_address(mut self, prefer: bool) -> Self {
        self.prefer_ip_address = prefer;
        self
    }

    /// The instance id (default `{host}:{app}:{port}`). Must be unique among the application's
    /// instances; `/`, `?`, `#`, `%` and whitespace are refused.
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance_id = Some(id.into());
        self
    }

    /// Adds a metadata entry (`zone`, `version`, `canary`, `weight`, ...; default none).
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Sets the `zone` metadata entry (used for zone affinity, and to order Eureka servers).
    pub fn zone(self, zone: impl Into<String>) -> Self {
        self.metadata("zone", zone)
    }

    /// Enables or disables the plain-HTTP port (default enabled).
    pub fn non_secure_port_enabled(mut self, enabled: bool) -> Self {
        self.non_secure_port_enabled = enabled;
        self
    }

    /// Serves HTTPS on `port` and advertises it (default: port 443, disabled). Callers then
    /// use HTTPS on this port, as Spring's do.
    pub fn secure_port(mut self, port: u16) -> Self {
        self.secure_port = port;
        self.secure_port_enabled = true;
        self
    }

    /// Keeps the secure port's number but marks it disabled (the default).
    pub fn secure_port_disabled(mut self) -> Self {
        self.secure_port_enabled = false;
        self
    }

    /// The VIP address Java clients look the service up by (default: the application name).
    pub fn vip_address(mut self, vip: impl Into<String>) -> Self {
        self.vip_address = Some(vip.into());
        self
    }

    /// The secure VIP address (default: the application name).
    pub fn secure_vip_address(mut self, vip: impl Into<String>) -> Self {
        self.secure_vip_address = Some(vip.into());
        self
    }

    /// The home page URL (default `http://{host}:{port}/`). Informational only.
    pub fn home_page_url(mut self, url: impl Into<String>) -> Self {
        self.home_page_url = Some(url.into());
        self
    }

    /// The status page URL (default `http://{host}:{port}` + the status page path).
    pub fn status_page_url(mut self, url: impl Into<String>) -> Self {
        self.status_page_url = Some(url.into());
        self
    }

    /// The health check URL (default `http://{host}:{port}` + the health check path).
    pub fn health_check_url(mut self, url: impl Into<String>) -> Self {
        self.health_check_url = Some(url.into());
        self
    }

    /// The path of the default status page URL (default `/info`).
    pub fn status_page_path(mut self, path: impl Into<String>) -> Self {
        self.status_page_path = path.into();
        self
    }

    /// The path of the default health check URL (default `/health`).
    pub fn health_check_path(mut self, path: impl Into<String>) -> Self {
        self.health_check_path = path.into();
        self
    }

    /// How often to send heartbeats (default 30 s; whole seconds, at least 1).
    pub fn lease_renewal_interval(mut self, interval: Duration) -> Self {
        self.lease_renewal_interval = interval;
        self
    }

    /// How long Eureka keeps the lease without heartbeats (default 90 s; whole seconds).
    pub fn lease_expiration_duration(mut self, duration: Duration) -> Self {
        self.lease_expiration_duration = duration;
        self
    }

    /// The status registered at start (default `UP`; `STARTING` to announce later with
    /// [`crate::EurekaClient::set_status`]).
    pub fn initial_status(mut self, status: InstanceStatus) -> Self {
        self.initial_status = status;
        self
    }

    /// The application group name (default none).
    pub fn app_group_name(mut self, group: impl Into<String>) -> Self {
        self.app_group_name = Some(group.into());
        self
    }

    /// The data center (default `MyOwn`).
    pub fn data_center(mut self, data_center: DataCenterInfo) -> Self {
        self.data_center = data_center;
        self
    }

    /// The application name as given.
    pub fn app_name(&self) -> &str {
        &self.app_name
    }

    /// The heartbeat period.
    pub fn renewal_interval(&self) -> Duration {
        self.lease_renewal_interval.max(Duration::from_secs(1))
    }

    /// The initial status.
    pub fn status(&self) -> InstanceStatus {
        self.initial_status
    }

    /// The host that will be registered as `hostName`.
    pub fn resolved_host(&self) -> String {
        if self.prefer_ip_address {
            self.resolved_ip()
        } else {
            self.host_name.clone().unwrap_or_else(local_host_name)
        }
    }

    /// The IP address that will be registered as `ipAddr`.
    pub fn resolved_ip(&self) -> String {
        self.ip_address
            .clone()
            .unwrap_or_else(|| local_ip().to_string())
    }

    /// The instance id that will be registered.
    pub fn resolved_instance_id(&self) -> String {
        match &self.instance_id {
            Some(id) => id.clone(),
            None => format!("{}:{}:{}", self.resolved_host(), self.app_name, self.port),
        }
    }

    pub(crate) fn metadata_map(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    pub(crate) fn zone_metadata(&self) -> Option<String> {
        self.metadata.get("zone").cloned()
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let bad = |what: &str| Err(Error::InvalidInstance(what.to_owned()));
        if self.app_name.trim().is_empty() {
            return bad("empty application name");
        }
        if !self
            .app_name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return bad("application name may only hold ASCII letters, digits, '-', '_' and '.'");
        }
        let id = self.resolved_instance_id();
        if id.is_empty()
            || id
                .chars()
                .any(|c| c.is_control() || c.is_whitespace() || "/?#%".contains(c))
        {
            return bad("instance id is empty or holds '/', '?', '#', '%', whitespace or control characters");
        }
        let host = self.resolved_host();
        if host.is_empty()
            || host
                .chars()
                .any(|c| c.is_control() || c.is_whitespace() || "/@?#".contains(c))
        {
            return bad(
                "host name is empty or holds '/', '@', '?', '#', whitespace or control characters",
            );
        }
        if self.non_secure_port_enabled && self.port == 0 {
            return bad("port 0");
        }
        if self.secure_port_enabled && self.secure_port == 0 {
            return bad("secure port 0");
        }
        if self.metadata.contains_key("@class") {
            return bad("metadata key `@class` is reserved");
        }
        Ok(())
    }

    /// The `InstanceInfo` to register, with `status` and `last_dirty` (epoch ms).
    pub(crate) fn to_instance_info(&self, status: InstanceStatus, last_dirty: u64) -> InstanceInfo {
        let host = self.resolved_host();
        let ip = self.resolved_ip();
        let authority = if host.contains(':') {
            format!("[{host}]:{}", self.port)
        } else {
            format!("{host}:{}", self.port)
        };
        let base = format!("http://{authority}");
        let secs = |d: Duration| u32::try_from(d.as_secs()).unwrap_or(u32::MAX);
        let mut info = InstanceInfo::new(&self.app_name, host, ip, self.port);
        info.instance_id = Some(self.resolved_instance_id());
        info.status = status;
        info.overridden_status = InstanceStatus::Unknown;
        info.port = PortInfo {
            port: self.port,
            enabled: self.non_secure_port_enabled,
        };
        info.secure_port = PortInfo {
            port: self.secure_port,
            enabled: self.secure_port_enabled,
        };
        info.data_center_info = Some(self.data_center.clone());
        info.lease_info = Some(LeaseInfo::new(
            secs(self.lease_renewal_interval),
            secs(self.lease_expiration_duration),
        ));
        info.metadata = self.metadata.clone();
        info.app_group_name = self.app_group_name.as_ref().map(|g| g.to_ascii_uppercase());
        info.home_page_url = Some(
            self.home_page_url
                .clone()
                .unwrap_or_else(|| format!("{base}/")),
        );
        info.status_page_url = Some(
            self.status_page_url
                .clone()
                .unwrap_or_else(|| format!("{base}{}", self.status_page_path)),
        );
        info.health_check_url = Some(
            self.health_check_url
                .clone()
                .unwrap_or_else(|| format!("{base}{}", self.health_check_path)),
        );
        info.vip_address = Some(
            self.vip_address
                .clone()
                .unwrap_or_else(|| self.app_name.clone()),
        );
        info.secure_vip_address = Some(
            self.secure_vip_address
                .clone()
                .unwrap_or_else(|| self.app_name.clone()),
        );
        info.last_updated_timestamp = Some(last_dirty);
        info.last_dirty_timestamp = Some(last_dirty);
        info
    }
}

/// The machine's host name: `HOSTNAME`, else `/etc/hostname`, else `localhost`.
fn local_host_name() -> String {
    let from_env = std::env::var("HOSTNAME").ok().map(|h| h.trim().to_owned());
    let from_file = || {
        std::fs::read_to_string("/etc/hostname")
            .ok()
            .map(|h| h.trim().to_owned())
    };
    from_env
        .filter(|h| !h.is_empty())
        .or_else(|| from_file().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "localhost".to_owned())
}

/// The address the machine would use for outgoing traffic. Connecting a UDP socket sends
/// nothing; it only asks the routing table.
fn local_ip() -> IpAddr {
    let probe = || -> std::io::Result<IpAddr> {
        let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
        socket.connect((Ipv4Addr::new(192, 0, 2, 1), 9))?;
        Ok(socket.local_addr()?.ip())
    };
    probe()
        .ok()
        .filter(|ip| !ip.is_unspecified())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST))
}
