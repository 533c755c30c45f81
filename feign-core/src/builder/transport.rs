//! The builder's transport settings: TLS, proxies, the connection pool and the HTTP version of
//! the built-in reqwest transport.

use std::time::Duration;

use super::Builder;
use crate::transport::{HttpClientConfig, HttpProtocol, Proxy, Tls};

impl<C> Builder<C> {
    /// TLS settings: trusted CAs, a client certificate for mutual TLS, protocol versions.
    /// Files are read and checked by [`build`](Builder::build). Default: [`Tls::new`] (the
    /// public roots, no client certificate, TLS 1.2 and 1.3).
    ///
    /// These settings, like the rest of this group, are the built-in transport's: with a
    /// transport given by [`client`](Builder::client) or
    /// [`tower_client`](Builder::tower_client), `build` refuses them.
    pub fn tls(mut self, tls: Tls) -> Self {
        self.http = self.http.tls(tls);
        self
    }

    /// Adds a proxy. Default: none, and then the `HTTP_PROXY` / `HTTPS_PROXY` / `NO_PROXY`
    /// environment variables are followed.
    pub fn proxy(mut self, proxy: Proxy) -> Self {
        self.http = self.http.proxy(proxy);
        self
    }

    /// How long an idle pooled connection is kept for reuse. Default 90 s.
    pub fn pool_idle_timeout(mut self, timeout: Duration) -> Self {
        self.http = self.http.pool_idle_timeout(timeout);
        self
    }

    /// The most idle connections kept per host (0: every call opens a connection of its
    /// own). Default: no limit.
    pub fn pool_max_idle_per_host(mut self, max: usize) -> Self {
        self.http = self.http.pool_max_idle_per_host(max);
        self
    }

    /// The HTTP version spoken, e.g. [`HttpProtocol::Http2PriorKnowledge`] for HTTP/2 without
    /// negotiation (`h2c`). Default [`HttpProtocol::Auto`].
    pub fn http_protocol(mut self, protocol: HttpProtocol) -> Self {
        self.http = self.http.protocol(protocol);
        self
    }

    /// Replaces every setting of this group at once.
    pub fn http_client_config(mut self, config: HttpClientConfig) -> Self {
        self.http = config;
        self
    }
}
