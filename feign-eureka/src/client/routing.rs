//! Which registered instances may receive traffic, and as which `ServiceInstance`.
//!
//! Eureka has no authentication: anyone who reaches it can register anything. So only the
//! registered `hostName` and port are ever used (URL fields like `homePageUrl` never are; of
//! `healthCheckUrl`, feign-lb's health checks take the scheme, port, path and query, on the
//! instance's own host), and
//! an instance is routable only when it is `UP` and its addresses are plausible: no unspecified
//! (`0.0.0.0`, `::`), broadcast or multicast address, no link-local address (which includes the
//! cloud metadata service `169.254.169.254`) unless allowed, no loopback when disallowed, a
//! non-zero port, and a host name made of DNS characters only (no `/`, `@`, whitespace or
//! control bytes).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use feign_lb::ServiceInstance;

use crate::model::{InstanceInfo, InstanceStatus, PortInfo};

/// Routing rules applied to every registered instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RoutingPolicy {
    pub(crate) only_up: bool,
    pub(crate) allow_loopback: bool,
    pub(crate) allow_link_local: bool,
}

impl Default for RoutingPolicy {
    fn default() -> Self {
        RoutingPolicy {
            only_up: true,
            allow_loopback: true,
            allow_link_local: false,
        }
    }
}

/// Why an instance is not routable because of its registration (not its status).
pub(crate) type Refusal = &'static str;

fn check_ip(ip: IpAddr, policy: &RoutingPolicy) -> Result<(), Refusal> {
    if ip.is_unspecified() {
        return Err("unspecified address");
    }
    if ip.is_multicast() {
        return Err("multicast address");
    }
    if ip.is_loopback() && !policy.allow_loopback {
        return Err("loopback address");
    }
    let link_local = match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    };
    if link_local && !policy.allow_link_local {
        return Err("link-local address");
    }
    if let IpAddr::V4(v4) = ip {
        if v4.is_broadcast() {
            return Err("broadcast address");
        }
    }
    Ok(())
}

fn check_host(host: &str, policy: &RoutingPolicy) -> Result<(), Refusal> {
    if host.is_empty() {
        return Err("empty host");
    }
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return check_ip(ip, policy);
    }
    let dns_like = host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
        && !host.starts_with('.')
        && !host.starts_with('-');
    if !dns_like {
        return Err("host is not an IP address or DNS name");
    }
    if host.eq_ignore_ascii_case("localhost") && !policy.allow_loopback {
        return Err("loopback address");
    }
    Ok(())
}

/// The registered addresses of an instance, as routing checks them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Addresses<'a> {
    pub(crate) host_name: &'a str,
    pub(crate) ip_addr: &'a str,
    pub(crate) port: PortInfo,
    pub(crate) secure_port: PortInfo,
    /// `healthCheckUrl` and `secureHealthCheckUrl`.
    pub(crate) health_check_urls: [Option<&'a str>; 2],
}

impl<'a> From<&'a InstanceInfo> for Addresses<'a> {
    fn from(info: &'a InstanceInfo) -> Self {
        Addresses {
            host_name: &info.host_name,
            ip_addr: &info.ip_addr,
            port: info.port,
            secure_port: info.secure_port,
            health_check_urls: [
                info.health_check_url.as_deref(),
                info.secure_health_check_url.as_deref(),
            ],
        }
    }
}

/// The health check URL an instance registered, as written: the secure one when the instance
/// is `secure` and has one. feign-lb's health checks take only its scheme, port, path and query
/// from it, on the instance's own host.
fn health_check_url<'a>(addresses: &Addresses<'a>, secure: bool) -> Option<&'a str> {
    let [plain, secure_url] = addresses.health_check_urls;
    let registered = if secure { secure_url.or(plain) } else { plain }?;
    Some(registered.trim()).filter(|url| !url.is_empty())
}

/// Checks an instance's addresses; `Ok` with `(host, port, secure)` to route to.
pub(crate) fn check_addresses<'a>(
    addresses: &Addresses<'a>,
    policy: &RoutingPolicy,
) -> Result<(&'a str, u16, bool), Refusal> {
    check_host(addresses.host_name, policy)?;
    if addresses.ip_addr.is_empty() {
        return Err("missing ipAddr");
    }
    match addresses.ip_addr.parse::<IpAddr>() {
        Ok(ip) => check_ip(ip, policy)?,
        Err(_) => return Err("ipAddr is not an IP address"),
    }
    let (port, secure) = if addresses.secure_port.enabled {
        (addresses.secure_port.port, true)
    } else if addresses.port.enabled {
        (addresses.port.port, false)
    } else {
        return Err("no enabled port");
    };
    if port == 0 {
        return Err("port 0 or out of range");
    }
    Ok((addresses.host_name, port, secure))
}

/// The `ServiceInstance` for an instance with these addresses and status if it may receive
/// traffic: `Ok(None)` when only its status keeps it out, `Err` when its registration is
/// unusable. `metadata` is called only for a routable instance.
///
/// `id` is the instance id and `service_id` the lower-case application name, both shared.
pub(crate) fn to_service_instance(
    addresses: &Addresses<'_>,
    status: InstanceStatus,
    id: &Arc<str>,
    service_id: &Arc<str>,
    policy: &RoutingPolicy,
    metadata: impl FnOnce() -> Arc<BTreeMap<String, String>>,
) -> Result<Option<ServiceInstance>, Refusal> {
    let (host, port, secure) = check_addresses(addresses, policy)?;
    if policy.only_up && status != InstanceStatus::Up {
        return Ok(None);
    }
    let instance = ServiceInstance::from_parts(
        service_id.clone(),
        id.clone(),
        host,
        port,
        secure,
        metadata(),
    );
    Ok(Some(match health_check_url(addresses, secure) {
        Some(url) => instance.with_health_check_url(url),
        None => instance,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc() -> Arc<str> {
        Arc::from("svc")
    }

    fn to_service_instance(
        info: &InstanceInfo,
        service_id: &Arc<str>,
        policy: &RoutingPolicy,
    ) -> Result<Option<ServiceInstance>, Refusal> {
        let id = Arc::from(info.id());
        super::to_service_instance(&info.into(), info.status, &id, service_id, policy, || {
            Arc::new(info.metadata.clone())
        })
    }

    fn instance(host: &str, ip: &str, port: u16) -> InstanceInfo {
        InstanceInfo::new("svc", host, ip, port)
    }

    #[test]
    fn poisoned_addresses_are_refused() {
        let p = RoutingPolicy::default();
        for (host, ip, port) in [
            ("169.254.169.254", "169.254.169.254", 80),
            ("0.0.0.0", "0.0.0.0", 80),
            ("::", "::", 80),
            ("10.0.0.1", "10.0.0.1", 0),
            ("a/b@evil", "10.0.0.1", 80),
            ("evil\r\nX: y", "10.0.0.1", 80),
            ("good.example", "169.254.169.254", 80),
            ("good.example", "", 80),
            ("fe80::1", "fe80::1", 80),
            ("224.0.0.1", "224.0.0.1", 80),
        ] {
            assert!(
                to_service_instance(&instance(host, ip, port), &svc(), &p).is_err(),
                "{host:?} {ip} {port}"
            );
        }
        let strict = RoutingPolicy {
            allow_loopback: false,
            ..p
        };
        assert!(
            to_service_instance(&instance("127.0.0.1", "127.0.0.1", 80), &svc(), &strict).is_err()
        );
        assert!(
            to_service_instance(&instance("127.0.0.1", "127.0.0.1", 80), &svc(), &p)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn secure_port_wins_when_enabled() {
        let mut info = instance("10.0.0.1", "10.0.0.1", 8080);
        info.secure_port = crate::model::PortInfo::enabled(8443);
        let si = to_service_instance(&info, &svc(), &RoutingPolicy::default())
            .unwrap()
            .unwrap();
        assert_eq!((si.port(), si.is_secure()), (8443, true));
        assert_eq!(si.base_url().as_ref(), "https://10.0.0.1:8443");
    }

    #[test]
    fn the_registered_health_check_url_goes_along_the_secure_one_for_a_secure_instance() {
        let mut info = instance("10.0.0.1", "10.0.0.1", 8080);
        info.health_check_url = Some(" http://10.0.0.1:8081/actuator/health ".to_owned());
        let routed = |info: &InstanceInfo| {
            let si = to_service_instance(info, &svc(), &RoutingPolicy::default());
            si.unwrap().unwrap().health_check_url().map(str::to_owned)
        };
        assert_eq!(
            routed(&info).as_deref(),
            Some("http://10.0.0.1:8081/actuator/health")
        );
        info.secure_port = crate::model::PortInfo::enabled(8443);
        assert_eq!(
            routed(&info).as_deref(),
            Some("http://10.0.0.1:8081/actuator/health"),
            "no secure one registered"
        );
        info.secure_health_check_url = Some("https://10.0.0.1:8444/health".to_owned());
        assert_eq!(
            routed(&info).as_deref(),
            Some("https://10.0.0.1:8444/health")
        );
        info.health_check_url = None;
        info.secure_health_check_url = Some(String::new());
        assert_eq!(routed(&info), None);
    }

    #[test]
    fn only_up_is_routable() {
        let mut info = instance("10.0.0.1", "10.0.0.1", 8080);
        info.status = InstanceStatus::OutOfService;
        assert!(
            to_service_instance(&info, &svc(), &RoutingPolicy::default())
                .unwrap()
                .is_none()
        );
    }
}
