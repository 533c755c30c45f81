//! TLS for the registry: a PEM certificate chain and its private key, read once at start into a
//! rustls acceptor (TLS 1.2 and 1.3, rustls's safe defaults, HTTP/1.1 by ALPN).

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// A certificate chain and private key in PEM, as given to the builder. `Debug` does not show
/// the key.
#[derive(Clone)]
pub(crate) struct TlsPem {
    pub(crate) cert: Vec<u8>,
    pub(crate) key: Vec<u8>,
    /// When set, clients must show a certificate signed by one of these CAs (mutual TLS).
    pub(crate) client_ca: Option<Vec<u8>>,
}

impl std::fmt::Debug for TlsPem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsPem")
            .field("cert_bytes", &self.cert.len())
            .field("key", &"***")
            .field("client_ca", &self.client_ca.is_some())
            .finish()
    }
}

/// Why the certificate or key cannot serve TLS.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The certificate PEM holds no readable certificate.
    #[error("no certificate in the certificate PEM")]
    NoCertificate,
    /// Client certificates were asked for (`tls_client_ca_pem`) without the server's own
    /// certificate and key (`tls_pem`).
    #[error("mutual TLS needs the server's own certificate and key too: set tls_pem (serve --tls-cert, --tls-key)")]
    ClientCaWithoutCertificate,
    /// A certificate in the PEM cannot be read.
    #[error("unreadable certificate PEM")]
    Certificate(#[source] rustls::pki_types::pem::Error),
    /// The key PEM holds no readable private key (PKCS#8, PKCS#1 or SEC1), or it is encrypted.
    #[error("no readable private key in the key PEM (an encrypted key is not supported)")]
    Key(#[source] rustls::pki_types::pem::Error),
    /// The client CA PEM holds no usable certificate.
    #[error("no usable certificate in the client CA PEM")]
    ClientCa(#[source] Option<Box<dyn std::error::Error + Send + Sync>>),
    /// rustls refused the pair: a key that does not match the certificate, or of a kind it
    /// cannot use.
    #[error("the certificate and key cannot serve TLS")]
    Refused(#[source] rustls::Error),
}

/// The acceptor for `cert_pem` (the server's certificate first, then its chain) and `key_pem`.
pub(crate) fn acceptor(pem: &TlsPem) -> Result<TlsAcceptor, TlsError> {
    let (cert_pem, key_pem) = (&pem.cert[..], &pem.key[..]);
    if cert_pem.is_empty() && key_pem.is_empty() && pem.client_ca.is_some() {
        return Err(TlsError::ClientCaWithoutCertificate);
    }
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(TlsError::Certificate)?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate);
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(TlsError::Key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Refused)?;
    let builder = match &pem.client_ca {
        Some(ca) => builder.with_client_cert_verifier(client_verifier(ca, provider)?),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(TlsError::Refused)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Accepts only clients whose certificate one of the CAs in `ca_pem` signed.
fn client_verifier(
    ca_pem: &[u8],
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem) {
        let cert = cert.map_err(|e| TlsError::ClientCa(Some(Box::new(e))))?;
        roots
            .add(cert)
            .map_err(|e| TlsError::ClientCa(Some(Box::new(e))))?;
    }
    if roots.is_empty() {
        return Err(TlsError::ClientCa(None));
    }
    rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| TlsError::ClientCa(Some(Box::new(e))))
}
