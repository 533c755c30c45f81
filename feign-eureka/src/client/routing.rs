//! Which registered instances may receive traffic, and as which `ServiceInstance`.
//!
//! Eureka has no authentication: anyone who reaches it can register anything. So only the
//! registered `hostName` and port are ever used (URL fields like `homePageUrl` never are), and
//! an instance is routable only when it is `UP` and its addresses are plausible: no unspecified
//! (`0.0.0.0`, `::`), broadcast or multicast address, no link-local address (which includes the
//! cloud metadata service `169.254.169.254`) unless allowed, no loopback when disallowed, a
//! non-zero port, and a host name made of DNS characters only (no `/`, `@`, whitespace or
//! control bytes).

use std::net::IpAddr;
use std::sync::Arc;

use feign_lb::ServiceInstance;

use crate::model::{InstanceInfo, InstanceStatus};

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

/// Checks an instance's addresses; `Ok` with `(host, port, secure)` to route to.
pub(crate) fn check_addresses<'a>(
    info: &'a InstanceInfo,
    policy: &RoutingPolicy,
) -> Result<(&'a str, u16, bool), Refusal> {
    check_host(&info.host_name, policy)?;
    if info.ip_addr.is_empty() {
        return Err("missing ipAddr");
    }
    match info.ip_addr.parse::<IpAddr>() {
        Ok(ip) => check_ip(ip, policy)?,
        Err(_) => return Err("ipAddr is not an IP address"),
    }
    let (port, secure) = if info.secure_port.enabled {
        (info.secure_port.port, true)
    } else if info.port.enabled {
        (info.port.port, false)
    } else {
        return Err("no enabled port");
    };
    if port == 0 {
        return Err("port 0 or out of range");
    }
    Ok((&info.host_name, port, secure))
}

/// The `ServiceInstance` for `info` if it may receive traffic, without metadata (the caller
/// moves it in): `Ok(None)` when only its status keeps it out, `Err` when its registration is
/// unusable.
///
/// `id` is `info.id()` and `service_id` the lower-case application name, both shared.
pub(crate) fn to_service_instance(
    info: &InstanceInfo,
    id: &Arc<str>,
    service_id: &Arc<str>,
    policy: &RoutingPolicy,
) -> Result<Option<ServiceInstance>, Refusal> {
    let (host, port, secure) = check_addresses(info, policy)?;
    if policy.only_up && info.status != InstanceStatus::Up {
        return Ok(None);
    }
    let mut instance =
        ServiceInstance::new(service_id.clone(), host, port).with_instance_id(id.clone());
    if secure {
        instance = instance.with_secure(true);
    }
    Ok(Some(instance))
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
        super::to_service_instance(info, &Arc::from(info.id()), service_id, policy)
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
