//! [`Proxy`]: an HTTP or HTTPS proxy, its credentials kept out of logs, `Debug` and errors.

use std::fmt;

use crate::redact::{split_userinfo, Credentials};
use crate::Error;

/// Which requests go through a proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Http,
    Https,
    All,
}

/// A proxy for a client's requests: plain `http://` requests are sent to it in absolute form,
/// `https://` ones through a `CONNECT` tunnel. The proxy itself is reached over `http://` or,
/// for a proxy URL starting `https://`, over TLS with the client's trust roots.
///
/// A `user:password@` in the URL, or [`Proxy::basic_auth`], becomes the `Proxy-Authorization`
/// header; the password never appears in `Debug`, logs or errors. Setting any proxy turns off
/// the `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY` environment variables, which a client without
/// one follows. A bad URL is an error from the client's `build()`.
///
/// ```
/// use feign_core::transport::Proxy;
///
/// let proxy = Proxy::all("http://app:s3cret@proxy.internal:3128")
///     .no_proxy("localhost,127.0.0.1,.svc.cluster.local");
/// assert!(!format!("{proxy:?}").contains("s3cret"));
/// ```
#[derive(Clone)]
#[must_use]
pub struct Proxy {
    scope: Scope,
    url: String,
    credentials: Option<Credentials>,
    no_proxy: Option<String>,
}

impl Proxy {
    fn new(scope: Scope, url: &str) -> Proxy {
        let (url, credentials) = split_userinfo(url);
        Proxy {
            scope,
            url: url.into_owned(),
            credentials,
            no_proxy: None,
        }
    }

    /// A proxy for `http://` requests only.
    pub fn http(url: impl AsRef<str>) -> Proxy {
        Proxy::new(Scope::Http, url.as_ref())
    }

    /// A proxy for `https://` requests only.
    pub fn https(url: impl AsRef<str>) -> Proxy {
        Proxy::new(Scope::Https, url.as_ref())
    }

    /// A proxy for every request.
    pub fn all(url: impl AsRef<str>) -> Proxy {
        Proxy::new(Scope::All, url.as_ref())
    }

    /// Basic credentials for the proxy (replacing any in the URL).
    pub fn basic_auth(mut self, username: impl Into<String>, password: impl Into<String>) -> Proxy {
        self.credentials = Some(Credentials::new(username, password));
        self
    }

    /// Hosts reached directly, not through this proxy: comma-separated host names (a name
    /// also covers its subdomains; a leading `.` covers only them), IP addresses, CIDR
    /// ranges (`10.0.0.0/8`), or `*` for all (curl's `NO_PROXY` syntax). Default: none.
    pub fn no_proxy(mut self, hosts: impl Into<String>) -> Proxy {
        self.no_proxy = Some(hosts.into());
        self
    }

    /// The reqwest proxy, or a build error that shows the URL without its password.
    pub(crate) fn to_reqwest(&self) -> Result<reqwest::Proxy, Error> {
        let invalid = |why: &str| {
            Error::builder(format!(
                "invalid proxy url `{}`: {why}",
                crate::redact::url(&self.url)
            ))
        };
        let parsed = url::Url::parse(&self.url).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid("scheme must be http or https"));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid("no host"));
        }
        let proxy = match self.scope {
            Scope::Http => reqwest::Proxy::http(parsed.as_str()),
            Scope::Https => reqwest::Proxy::https(parsed.as_str()),
            Scope::All => reqwest::Proxy::all(parsed.as_str()),
        }
        .map_err(|e| invalid("not accepted").with_source(e.without_url()))?;
        let proxy = match &self.credentials {
            Some(c) => proxy.basic_auth(c.username(), c.password()),
            None => proxy,
        };
        Ok(proxy.no_proxy(
            self.no_proxy
                .as_deref()
                .and_then(reqwest::NoProxy::from_string),
        ))
    }
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxy")
            .field("scope", &self.scope)
            .field("url", &crate::redact::url(&self.url).to_string())
            .field("credentials", &self.credentials)
            .field("no_proxy", &self.no_proxy)
            .finish()
    }
}
