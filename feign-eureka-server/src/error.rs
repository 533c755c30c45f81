//! Errors of starting a server.

use std::io;

use crate::tls::TlsError;

/// Why [`EurekaServerBuilder::start`](super::EurekaServerBuilder::start) failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The bind address is not `host:port`.
    #[error("invalid bind address {0:?}")]
    InvalidBindAddress(String),
    /// The listener could not be bound.
    #[error("cannot bind {addr}")]
    Bind {
        /// The address asked for.
        addr: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// A peer URL is not an absolute `http`/`https` URL.
    #[error("invalid peer url {0:?}")]
    InvalidPeerUrl(String),
    /// A setting is out of range.
    #[error("invalid setting: {0}")]
    InvalidSetting(&'static str),
    /// The TLS certificate or key cannot be used.
    #[error("cannot serve TLS")]
    Tls(#[source] TlsError),
    /// The HTTP client for the peers cannot be built: a TLS file of
    /// [`EurekaServerBuilder::peer_tls`](super::EurekaServerBuilder::peer_tls) cannot be read
    /// or used.
    #[error("cannot build the client for peers")]
    PeerClient(#[source] feign_core::BoxError),
}
