//! How the built-in reqwest transport connects: TLS, proxies, the connection pool and the HTTP
//! version, per client. [`HttpClientConfig`] holds them; the client builders take it, and
//! [`HttpClientConfig::apply`] puts it on any `reqwest::ClientBuilder`.

#[cfg(feature = "config")]
mod bundle;
mod pem;
mod proxy;
mod tls;

use std::time::Duration;

pub use proxy::Proxy;
pub use tls::{Tls, TlsVersion};

use crate::Error;

/// Which HTTP version a client speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpProtocol {
    /// HTTP/1.1, or HTTP/2 where the server picks it during the TLS handshake (ALPN).
    #[default]
    Auto,
    /// HTTP/1.1 only.
    Http1Only,
    /// HTTP/2 from the first byte, without negotiation ("prior knowledge"): for servers known
    /// to speak it, `h2c` over plain TCP included. A server that speaks only HTTP/1 fails
    /// every call.
    Http2PriorKnowledge,
}

/// Connection settings of the built-in transport: [`Tls`], [`Proxy`]s, the connection pool and
/// the HTTP version. Every client builder takes one (feign-core's `Builder`, feign-eureka's
/// builder); [`HttpClientConfig::apply`] sets it on a reqwest builder of your own.
///
/// `Debug` shows no key material and no proxy password.
///
/// ```
/// use std::time::Duration;
/// use feign_core::transport::{HttpClientConfig, HttpProtocol, Proxy, Tls, TlsVersion};
///
/// let config = HttpClientConfig::new()
///     .tls(Tls::new().min_version(TlsVersion::Tls13))
///     .proxy(Proxy::all("http://proxy.internal:3128").no_proxy("localhost"))
///     .pool_idle_timeout(Duration::from_secs(30))
///     .pool_max_idle_per_host(8)
///     .protocol(HttpProtocol::Auto);
/// let client = config
///     .apply(feign_core::client::reqwest_builder(Duration::from_secs(2), None, None))?
///     .build()?;
/// # let _ = client;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct HttpClientConfig {
    tls: Option<Tls>,
    proxies: Vec<Proxy>,
    pool_idle_timeout: Option<Duration>,
    pool_max_idle_per_host: Option<usize>,
    protocol: HttpProtocol,
}

impl HttpClientConfig {
    /// The defaults: see each setter.
    pub fn new() -> Self {
        HttpClientConfig::default()
    }

    /// TLS settings. Default: [`Tls::new`] (public roots, no client certificate).
    pub fn tls(mut self, tls: Tls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Adds a proxy; the first whose scope and no-proxy list match a request is used.
    /// Default: none, and then the `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY` environment
    /// variables are followed.
    pub fn proxy(mut self, proxy: Proxy) -> Self {
        self.proxies.push(proxy);
        self
    }

    /// How long an idle pooled connection is kept for reuse. Default 90 s.
    pub fn pool_idle_timeout(mut self, timeout: Duration) -> Self {
        self.pool_idle_timeout = Some(timeout);
        self
    }

    /// The most idle connections kept per host (0: none, every call opens its own).
    /// Default: no limit.
    pub fn pool_max_idle_per_host(mut self, max: usize) -> Self {
        self.pool_max_idle_per_host = Some(max);
        self
    }

    /// The HTTP version spoken. Default [`HttpProtocol::Auto`].
    pub fn protocol(mut self, protocol: HttpProtocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// The TLS settings, if any were given.
    pub fn get_tls(&self) -> Option<&Tls> {
        self.tls.as_ref()
    }

    /// Whether certificate checks are off ([`Tls::danger_accept_invalid_certs`]).
    pub fn accepts_invalid_certs(&self) -> bool {
        self.tls.as_ref().is_some_and(Tls::accepts_invalid_certs)
    }

    /// Whether nothing was set: the built-in transport's defaults.
    pub(crate) fn is_default(&self) -> bool {
        self.tls.is_none()
            && self.proxies.is_empty()
            && self.pool_idle_timeout.is_none()
            && self.pool_max_idle_per_host.is_none()
            && self.protocol == HttpProtocol::Auto
    }

    /// The TLS settings to change in place, made on first use.
    #[cfg(feature = "config")]
    pub(crate) fn tls_mut(&mut self) -> &mut Tls {
        self.tls.get_or_insert_with(Tls::new)
    }

    /// Sets these settings on `builder`: certificate files are read and checked here, and a
    /// bad proxy URL is refused. The error is a builder error ([`Error::is_builder`]) naming
    /// the file or the URL (without its password).
    pub fn apply(
        &self,
        mut builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, Error> {
        if let Some(tls) = &self.tls {
            builder = tls.apply(builder)?;
        }
        for proxy in &self.proxies {
            builder = builder.proxy(proxy.to_reqwest()?);
        }
        if let Some(timeout) = self.pool_idle_timeout {
            builder = builder.pool_idle_timeout(timeout);
        }
        if let Some(max) = self.pool_max_idle_per_host {
            builder = builder.pool_max_idle_per_host(max);
        }
        builder = match self.protocol {
            HttpProtocol::Auto => builder,
            HttpProtocol::Http1Only => builder.http1_only(),
            HttpProtocol::Http2PriorKnowledge => builder.http2_prior_knowledge(),
        };
        Ok(builder)
    }

    /// Logs a warning when certificate checks are off, naming `client`.
    pub(crate) fn warn_if_insecure(&self, client: &str) {
        if self.accepts_invalid_certs() {
            tracing::warn!(
                client,
                "TLS certificate checks are OFF (danger_accept_invalid_certs): any server, or \
                 anyone on the path, is accepted; never use this outside a test environment"
            );
        }
    }
}
