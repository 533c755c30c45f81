//! A fixed (but replaceable) list of instances per service.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::versioned::Versioned;
use crate::{InstanceSupplier, Instances, ServiceInstance};

/// A URL a static list could not use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid instance url `{url}`: {reason}")]
pub struct InvalidUrl {
    url: String,
    reason: &'static str,
}

/// Instances listed by hand: `StaticSupplier::new("order-service", ["http://127.0.0.1:8081"])`.
///
/// A handle: clones share the lists, so a test (or a config reload) can replace a list with
/// [`StaticSupplier::set`] after handing a clone to the balancer, which rebuilds at once.
#[derive(Clone, Debug, Default)]
pub struct StaticSupplier {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    lists: Versioned<Vec<(Box<str>, Instances)>>,
}

impl StaticSupplier {
    /// No services yet.
    pub fn empty() -> Self {
        StaticSupplier::default()
    }

    /// One service at these URLs (`http://host:port` or `https://host:port`; the instance id is
    /// `host:port`), written in code. For URLs read from input, use
    /// [`StaticSupplier::try_new`].
    ///
    /// # Panics
    ///
    /// If a URL cannot be used (another scheme, a path, user info, a bad port...): the message
    /// names the URL (its password hidden) and why, so a typo fails at start rather than
    /// leaving the service with fewer instances than listed.
    pub fn new<I, S>(service: &str, urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        StaticSupplier::empty().with_service(service, urls)
    }

    /// Like [`StaticSupplier::new`], returning the first URL it cannot use as an error.
    pub fn try_new<I, S>(service: &str, urls: I) -> Result<Self, InvalidUrl>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let instances = urls
            .into_iter()
            .map(|u| parse(service, u.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(StaticSupplier::empty().with_instances(service, instances))
    }

    /// Like [`StaticSupplier::new`], skipping the URLs it cannot use with a warning each (the
    /// behaviour `new` had before): for lists where a partial list beats none.
    pub fn lenient<I, S>(service: &str, urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let instances = usable(service, urls, |e| {
            tracing::warn!(service, error = %e, "instance skipped");
        });
        StaticSupplier::empty().with_instances(service, instances)
    }

    /// Adds (or replaces) a service at these URLs.
    ///
    /// # Panics
    ///
    /// If a URL cannot be used, as [`StaticSupplier::new`] does.
    pub fn with_service<I, S>(self, service: &str, urls: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let instances = usable(service, urls, |e| {
            panic!(
                "StaticSupplier for `{service}`: {e} (StaticSupplier::try_new returns this as an error)"
            )
        });
        self.with_instances(service, instances)
    }

    /// Adds (or replaces) a service with fully described instances (zone, metadata, ...).
    pub fn with_instances(self, service: &str, instances: Vec<ServiceInstance>) -> Self {
        self.set(service, instances);
        self
    }

    /// Replaces a service's list; balancers see the new one on their next pick.
    pub fn set(&self, service: &str, instances: Vec<ServiceInstance>) {
        let list: Instances = instances.into();
        self.inner.lists.update(|lists| {
            let mut next: Vec<(Box<str>, Instances)> = lists
                .iter()
                .filter(|(name, _)| !name.eq_ignore_ascii_case(service))
                .cloned()
                .collect();
            next.push((service.into(), list.clone()));
            next
        });
    }

    /// Removes a service; balancers then report it as unknown.
    pub fn remove(&self, service: &str) {
        self.inner.lists.update(|lists| {
            lists
                .iter()
                .filter(|(name, _)| !name.eq_ignore_ascii_case(service))
                .cloned()
                .collect::<Vec<_>>()
        });
    }
}

impl InstanceSupplier for StaticSupplier {
    fn instances(&self, service_id: &str) -> Option<Instances> {
        self.inner.lists.read(|lists| {
            lists
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(service_id))
                .map(|(_, list)| list.clone())
        })
    }

    fn version(&self) -> u64 {
        self.inner.lists.version()
    }

    fn changed(&self, seen: u64) -> BoxFuture<'static, ()> {
        self.inner.lists.changed(seen)
    }
}

/// The instances of the URLs `parse` accepts; `refused` is told of each other one.
fn usable<I, S>(service: &str, urls: I, refused: impl Fn(InvalidUrl)) -> Vec<ServiceInstance>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    urls.into_iter()
        .filter_map(|u| parse(service, u.as_ref()).map_err(&refused).ok())
        .collect()
}

/// Reads `http(s)://host:port[/]` into an instance.
fn parse(service: &str, url: &str) -> Result<ServiceInstance, InvalidUrl> {
    let invalid = |reason| InvalidUrl {
        url: shown(url),
        reason,
    };
    let trimmed = url.trim();
    let (secure, rest) = if let Some(rest) = trimmed.strip_prefix("http://") {
        (false, rest)
    } else if let Some(rest) = trimmed.strip_prefix("https://") {
        (true, rest)
    } else {
        return Err(invalid("expected http:// or https://"));
    };
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains(['/', '?', '#', '@', ' ']) {
        return Err(invalid("expected scheme, host and port only"));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => {
            let port: u16 = port.parse().map_err(|_| invalid("invalid port"))?;
            (host, port)
        }
        _ => (authority, if secure { 443 } else { 80 }),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(invalid("missing host"));
    }
    if port == 0 {
        return Err(invalid("port 0"));
    }
    Ok(ServiceInstance::new(service, host, port).with_secure(secure))
}

/// `url` as an error may show it: without secrets, at most 200 characters.
fn shown(url: &str) -> String {
    feign_core::redact::url(url)
        .to_string()
        .chars()
        .take(200)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_urls() {
        let s = StaticSupplier::try_new(
            "svc",
            [
                "http://127.0.0.1:8081",
                "https://example.test",
                "http://[::1]:9000/",
            ],
        )
        .unwrap();
        let list = s.instances("SVC").unwrap();
        assert_eq!(list[0].base_url().as_ref(), "http://127.0.0.1:8081");
        assert_eq!(list[0].instance_id(), "127.0.0.1:8081");
        assert_eq!(list[1].base_url().as_ref(), "https://example.test:443");
        assert_eq!(list[2].base_url().as_ref(), "http://[::1]:9000");
    }

    #[test]
    fn rejects_bad_urls_without_leaking_passwords() {
        for bad in [
            "ftp://x:1",
            "http://:80",
            "http://h:99999",
            "http://h:0",
            "http://u:secret@h:1",
        ] {
            let err = StaticSupplier::try_new("svc", [bad]).unwrap_err();
            assert!(!err.to_string().contains("secret"), "{err}");
        }
        let lenient = StaticSupplier::lenient("svc", ["nope", "http://127.0.0.1:1"]);
        assert_eq!(lenient.instances("svc").unwrap().len(), 1);
    }

    #[test]
    fn new_panics_naming_an_unusable_url() {
        for (bad, shown) in [
            ("htp://127.0.0.1:8081", "`htp://127.0.0.1:8081`"),
            (
                "http://127.0.0.1:80801",
                "`http://127.0.0.1:80801`: invalid port",
            ),
            ("http://u:secret@h:1", "`http://u:***@h:1`"),
        ] {
            let panic = std::panic::catch_unwind(|| {
                StaticSupplier::new("svc", ["http://127.0.0.1:1", bad])
            })
            .unwrap_err();
            let message = panic.downcast_ref::<String>().unwrap();
            assert!(message.contains(shown), "{message}");
            assert!(
                message.starts_with("StaticSupplier for `svc`: invalid instance url"),
                "{message}"
            );
            assert!(!message.contains("secret"), "{message}");
        }
    }

    #[test]
    fn set_moves_the_version() {
        let s = StaticSupplier::new("svc", ["http://127.0.0.1:1"]);
        let v = s.version();
        s.set("svc", vec![]);
        assert!(s.version() > v);
        assert_eq!(s.instances("svc").unwrap().len(), 0);
        assert!(s.instances("other").is_none());
    }
}
