//! Request routing filters, applied per pick over views precomputed when the instance list
//! changes, in this order: same instance / sticky session, zone preference (with failover),
//! version, hint, canary. Like Spring's supplier chain, each filter that matches nothing falls
//! back to what it was given (except a required version).

use std::time::Duration;

/// The metadata key of an instance's zone.
pub const ZONE_KEY: &str = "zone";
/// The metadata key matched against the hint.
pub const HINT_KEY: &str = "hint";
/// The metadata key of an instance's version.
pub const VERSION_KEY: &str = "version";
/// The metadata key that marks a canary instance (`canary=true`).
pub const CANARY_KEY: &str = "canary";
/// The metadata key of an instance's weight under [`Policy::Weighted`](crate::Policy::Weighted):
/// a number of at least 0, fractions included (default 1).
pub const WEIGHT_KEY: &str = "weight";

/// Zone preference: prefer instances whose metadata `zone` equals this one (case-insensitively),
/// falling back to all when the zone has none. With failover (on by default), when every
/// instance of the zone has failed within the failure memory (20 min by default), traffic moves
/// to the other zones and comes back once the memory of those failures expires or one of them
/// answers again.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct ZonePreference {
    pub(crate) zone: String,
    pub(crate) failover: bool,
    pub(crate) failed_ttl: Duration,
}

impl ZonePreference {
    /// Prefer `zone` (Spring's `spring.cloud.loadbalancer.zone`).
    pub fn new(zone: impl Into<String>) -> Self {
        ZonePreference {
            zone: zone.into(),
            failover: true,
            failed_ttl: Duration::from_secs(20 * 60),
        }
    }

    /// Whether to leave the zone when all its instances failed (default true).
    pub fn failover(mut self, yes: bool) -> Self {
        self.failover = yes;
        self
    }

    /// How long a failed instance is remembered as failed (default 20 min).
    pub fn failed_ttl(mut self, ttl: Duration) -> Self {
        self.failed_ttl = ttl;
        self
    }
}

/// Hints: the request header `X-SC-LB-Hint` (or a default hint) selects the instances whose
/// metadata `hint` equals it; no match falls back to all.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Hints {
    pub(crate) header: http::HeaderName,
    pub(crate) default: Option<String>,
}

impl Default for Hints {
    fn default() -> Self {
        Hints {
            header: http::HeaderName::from_static("x-sc-lb-hint"),
            default: None,
        }
    }
}

impl Hints {
    /// Hints from `X-SC-LB-Hint`, no default hint.
    pub fn new() -> Self {
        Hints::default()
    }

    /// Reads the hint from another header.
    pub fn header(mut self, name: http::HeaderName) -> Self {
        self.header = name;
        self
    }

    /// The hint of requests without the header (Spring's `spring.cloud.loadbalancer.hint.<service>`).
    pub fn default_hint(mut self, hint: impl Into<String>) -> Self {
        self.default = Some(hint.into());
        self
    }
}

/// Canary routing: instances with metadata `canary=true` get `share` of the traffic, plus every
/// request carrying the canary header; the others go to the stable instances. With no canary
/// instance, everything goes to the stable ones (and the reverse).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Canary {
    pub(crate) share_ppm: u32,
    pub(crate) header: Option<http::HeaderName>,
}

impl Canary {
    /// Sends `share` (0.0 to 1.0, clamped) of the requests to canary instances.
    pub fn share(share: f64) -> Self {
        let share = if share.is_nan() {
            0.0
        } else {
            share.clamp(0.0, 1.0)
        };
        Canary {
            share_ppm: (share * 1_000_000.0).round() as u32,
            header: None,
        }
    }

    /// Also routes every request carrying this header (any value but `false`) to the canaries.
    pub fn header(mut self, name: http::HeaderName) -> Self {
        self.header = Some(name);
        self
    }
}

/// Version routing: requests select instances whose metadata `version` equals the version in a
/// request header (or a default version).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct VersionRouting {
    pub(crate) header: http::HeaderName,
    pub(crate) default: Option<String>,
    pub(crate) required: bool,
}

impl VersionRouting {
    /// Reads the wanted version from `header`.
    pub fn header(name: http::HeaderName) -> Self {
        VersionRouting {
            header: name,
            default: None,
            required: false,
        }
    }

    /// The version of requests without the header.
    pub fn default_version(mut self, version: impl Into<String>) -> Self {
        self.default = Some(version.into());
        self
    }

    /// When set, a request whose version no instance has fails with "no instance" instead of
    /// going to any version (default false, like Spring's `fallback-to-available-instances`
    /// inverted).
    pub fn required(mut self, yes: bool) -> Self {
        self.required = yes;
        self
    }
}

/// Request-based sticky sessions: the cookie `sc-lb-instance-id` names the instance to use
/// while it is listed and not ejected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct StickySession {
    pub(crate) cookie: String,
}

impl Default for StickySession {
    fn default() -> Self {
        StickySession {
            cookie: "sc-lb-instance-id".to_owned(),
        }
    }
}

impl StickySession {
    /// Sticky sessions with Spring's cookie name, `sc-lb-instance-id`.
    pub fn new() -> Self {
        StickySession::default()
    }

    /// Uses another cookie name.
    pub fn cookie(mut self, name: impl Into<String>) -> Self {
        self.cookie = name.into();
        self
    }
}

/// Every routing filter of a service.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filters {
    pub(crate) zone: Option<ZonePreference>,
    pub(crate) hints: Option<Hints>,
    pub(crate) canary: Option<Canary>,
    pub(crate) version: Option<VersionRouting>,
    pub(crate) sticky: Option<StickySession>,
    pub(crate) same_instance: bool,
}

/// Finds `name`'s value among the request's `Cookie` headers, without allocating.
pub(crate) fn cookie<'h>(headers: &'h http::HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| k.trim() == name)
        .map(|(_, v)| v.trim().trim_matches('"'))
}

/// A header's value as text, if present and printable.
pub(crate) fn header<'h>(headers: &'h http::HeaderMap, name: &http::HeaderName) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cookie_among_others() {
        let mut headers = http::HeaderMap::new();
        headers.append(
            http::header::COOKIE,
            "a=1; sc-lb-instance-id=i-2".parse().unwrap(),
        );
        headers.append(http::header::COOKIE, "b=2".parse().unwrap());
        assert_eq!(cookie(&headers, "sc-lb-instance-id"), Some("i-2"));
        assert_eq!(cookie(&headers, "b"), Some("2"));
        assert_eq!(cookie(&headers, "c"), None);
    }
}
