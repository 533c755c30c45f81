//! Who is a peer: the one rule by which a request counts as a peer's. The replication header
//! (`api.rs`), the batch endpoint and the registration limit a batch's items take from all ask
//! [`Peers::knows`].
//!
//! A request that claims to replicate ([`claims_replication`]) is a peer's when any of these
//! holds:
//! - it carries the peer credentials (`EurekaServerBuilder::peer_credentials`), which the auth
//!   gate checked in constant time and marked with [`PeerCredentials`];
//! - it came over TLS with a client certificate valid for the host of a configured peer's URL:
//!   the name this registry checks that peer's own server certificate against;
//! - it came from an address a configured peer's host resolves to, resolved again (at most once
//!   a second) when a claim comes from an address not known, so a peer that moved is known
//!   again without a restart;
//! - the registry takes replication from any address (Netflix's behaviour).

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::time::Instant;

use crate::batch::REPLICATION_HEADER;

/// How long a resolution of the peers' hosts is used before a claim from an unknown address
/// resolves them again.
const RESOLVED_FOR: Duration = Duration::from_secs(1);

/// How long one resolution of the peers' hosts may take.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(2);

/// A resolver for the peers' host names, used both to reach them and to know them.
#[derive(Clone)]
pub(crate) struct PeerResolver(pub(crate) Arc<dyn reqwest::dns::Resolve>);

impl fmt::Debug for PeerResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PeerResolver")
    }
}

/// The end-entity certificate a client showed in its TLS handshake, set on each request of its
/// connection.
#[derive(Clone, Debug)]
pub(crate) struct ClientCertificate(pub(crate) Arc<CertificateDer<'static>>);

/// Set on a request by the auth gate when it carries the peer credentials.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeerCredentials;

/// Whether a request with `headers` to `path` claims to come from a peer: the replication
/// header, or a batch.
pub(crate) fn claims_replication(headers: &http::HeaderMap, path: &str) -> bool {
    headers
        .get(REPLICATION_HEADER)
        .is_some_and(|v| v.as_bytes() == b"true")
        || path
            .trim_end_matches('/')
            .ends_with("/peerreplication/batch")
}

/// The configured peers, and how a request is known to be one's.
pub(crate) struct Peers {
    /// Each peer URL's host (without brackets) and port.
    hosts: Vec<(String, u16)>,
    resolver: Option<PeerResolver>,
    any_address: bool,
    /// The addresses each host resolved to last, in the order of `hosts`.
    addresses: ArcSwap<Vec<Vec<IpAddr>>>,
    /// When the hosts were last resolved; held while they are resolved, so claims arriving
    /// meanwhile wait for that resolution rather than start their own.
    resolved_at: tokio::sync::Mutex<Option<Instant>>,
}

impl fmt::Debug for Peers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peers")
            .field("hosts", &self.hosts)
            .field("any_address", &self.any_address)
            .field("addresses", &self.addresses.load())
            .finish_non_exhaustive()
    }
}

impl Peers {
    /// The peers at `urls` (normalized, without this server's own), their hosts resolved now.
    pub(crate) async fn new(
        urls: &[String],
        resolver: Option<PeerResolver>,
        any_address: bool,
    ) -> Peers {
        let hosts = urls
            .iter()
            .filter_map(|url| url::Url::parse(url).ok())
            .filter_map(|url| {
                let host = url
                    .host_str()?
                    .trim_start_matches('[')
                    .trim_end_matches(']');
                Some((host.to_owned(), url.port_or_known_default()?))
            })
            .collect::<Vec<_>>();
        let peers = Peers {
            addresses: ArcSwap::from_pointee(vec![Vec::new(); hosts.len()]),
            hosts,
            resolver,
            any_address,
            resolved_at: tokio::sync::Mutex::new(None),
        };
        peers.resolve_again().await;
        peers
    }

    /// Whether a request that claims to replicate, from `address` with `parts`, is a peer's.
    pub(crate) async fn knows(&self, parts: &http::request::Parts, address: IpAddr) -> bool {
        if self.any_address || parts.extensions.get::<PeerCredentials>().is_some() {
            return true;
        }
        if let Some(ClientCertificate(certificate)) = parts.extensions.get() {
            if self.names_a_peer(certificate) {
                return true;
            }
        }
        if self.hosts.is_empty() {
            return false;
        }
        if self.resolved_to(address) {
            return true;
        }
        self.resolve_again().await;
        self.resolved_to(address)
    }

    fn resolved_to(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.addresses
            .load()
            .iter()
            .flatten()
            .any(|a| *a == address)
    }

    /// Whether `certificate` is valid for a peer's host, as a server certificate of that peer
    /// would have to be.
    fn names_a_peer(&self, certificate: &CertificateDer<'_>) -> bool {
        let Ok(parsed) = rustls::server::ParsedCertificate::try_from(certificate) else {
            return false;
        };
        self.hosts.iter().any(|(host, _)| {
            ServerName::try_from(host.as_str())
                .is_ok_and(|name| rustls::client::verify_server_name(&parsed, &name).is_ok())
        })
    }

    /// Resolves the hosts again unless they were within [`RESOLVED_FOR`]; a host that does not
    /// resolve keeps the addresses it had.
    async fn resolve_again(&self) {
        let mut resolved_at = self.resolved_at.lock().await;
        if resolved_at.is_some_and(|at| at.elapsed() < RESOLVED_FOR) {
            return;
        }
        let previous = self.addresses.load_full();
        let mut fresh = Vec::with_capacity(self.hosts.len());
        for (index, (host, port)) in self.hosts.iter().enumerate() {
            let resolved = tokio::time::timeout(RESOLVE_TIMEOUT, self.resolve(host, *port)).await;
            match resolved {
                Ok(Ok(addresses)) if !addresses.is_empty() => fresh.push(addresses),
                failed => {
                    let error = match failed {
                        Ok(Err(error)) => error.to_string(),
                        Ok(Ok(_)) => "no address".to_owned(),
                        Err(_) => "timed out".to_owned(),
                    };
                    tracing::warn!(%host, %error, "a peer's host does not resolve; it keeps the addresses it had");
                    fresh.push(previous.get(index).cloned().unwrap_or_default());
                }
            }
        }
        self.addresses.store(Arc::new(fresh));
        *resolved_at = Some(Instant::now());
    }

    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, feign_core::BoxError> {
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(vec![ip]);
        }
        let addresses: Vec<IpAddr> = match &self.resolver {
            Some(PeerResolver(resolver)) => {
                let name = reqwest::dns::Name::from_str(host)?;
                resolver.resolve(name).await?.map(|a| a.ip()).collect()
            }
            None => tokio::net::lookup_host((host, port))
                .await?
                .map(|a| a.ip())
                .collect(),
        };
        Ok(addresses.into_iter().map(|a| a.to_canonical()).collect())
    }
}
