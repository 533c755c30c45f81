//! Eureka service URLs: parsing, credentials kept apart, and the try order (own zone first).

use std::fmt;

use feign_core::redact::{self, split_userinfo, Credentials};
use rand::seq::SliceRandom;
use rand::Rng;

use super::Error;

/// One Eureka server base URL, e.g. `http://127.0.0.1:8761/eureka/`.
///
/// User info is taken out of the URL and kept for basic auth; `Display` and `Debug` show the
/// URL without it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// The base URL without user info, ending in `/`.
    pub(crate) base: String,
    /// The zone this URL was configured for (`defaultZone` by default).
    pub(crate) zone: String,
    /// Basic-auth credentials from the URL's user info.
    pub(crate) credentials: Option<Credentials>,
}

impl Endpoint {
    /// Parses `raw` (user info allowed, a trailing `/` added when missing).
    pub(crate) fn parse(raw: &str, zone: &str) -> Result<Endpoint, Error> {
        let raw = raw.trim();
        let invalid = |url: &str, reason: &str| Error::InvalidServiceUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let (without_userinfo, credentials) = split_userinfo(raw);
        let url = url::Url::parse(&without_userinfo)
            .map_err(|e| invalid(&redact::url(raw).to_string(), &e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(url.as_str(), "only http and https are supported"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(invalid(url.as_str(), "no host"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid(url.as_str(), "a query or fragment is not allowed"));
        }
        let mut base = url.to_string();
        if !base.ends_with('/') {
            base.push('/');
        }
        Ok(Endpoint {
            base,
            zone: zone.to_owned(),
            credentials,
        })
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("base", &self.base)
            .field("zone", &self.zone)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// The order to try servers in: those of `my_zone` first, then the others, each group
/// shuffled (Eureka's `ZoneAffinityClusterResolver`).
pub(crate) fn ordered(endpoints: &[Endpoint], my_zone: &str, rng: &mut impl Rng) -> Vec<Endpoint> {
    let (mut mine, mut others): (Vec<Endpoint>, Vec<Endpoint>) = endpoints
        .iter()
        .cloned()
        .partition(|e| e.zone.eq_ignore_ascii_case(my_zone));
    mine.shuffle(rng);
    others.shuffle(rng);
    mine.extend(others);
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_taken_out_of_the_url() {
        let e = Endpoint::parse("http://user:p%40ss@127.0.0.1:8761/eureka", "defaultZone").unwrap();
        assert_eq!(e.base, "http://127.0.0.1:8761/eureka/");
        assert_eq!(e.credentials, Some(Credentials::new("user", "p@ss")));
        assert!(!format!("{e:?}{e}").contains("p@ss"));
    }

    #[test]
    fn bad_urls_are_refused_without_echoing_secrets() {
        let err = Endpoint::parse("ftp://u:secret@host/eureka/", "z")
            .unwrap_err()
            .to_string();
        assert!(err.contains("only http"), "{err}");
        assert!(!err.contains("secret"), "{err}");
        let err = Endpoint::parse("not a url", "z").unwrap_err().to_string();
        assert!(err.contains("invalid eureka service url"), "{err}");
        let err = Endpoint::parse("http://u:secret@h:99999/", "z")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("secret"), "{err}");
    }

    #[test]
    fn own_zone_comes_first() {
        let list: Vec<_> = ["a", "b", "a", "c"]
            .iter()
            .enumerate()
            .map(|(i, z)| Endpoint::parse(&format!("http://h{i}/eureka/"), z).unwrap())
            .collect();
        for _ in 0..20 {
            let order = ordered(&list, "A", &mut rand::rng());
            assert!(order[..2].iter().all(|e| e.zone == "a"));
            assert_eq!(order.len(), 4);
        }
    }
}
