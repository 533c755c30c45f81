//! The soak's own certificate authority, made in memory at start: it signs the certificate the
//! TLS instances serve for `127.0.0.1`, and the callers trust it alone.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// The CA's certificate (PEM) and the acceptor of the instances' certificate.
pub(crate) struct Pki {
    /// The CA, PEM: what the callers trust.
    pub(crate) ca: String,
    /// The TLS server side of every HTTPS instance.
    pub(crate) acceptor: TlsAcceptor,
}

impl Pki {
    /// A fresh CA and a server certificate for `127.0.0.1` it signs.
    pub(crate) fn new() -> Result<Pki, Box<dyn std::error::Error + Send + Sync>> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "feign-soak CA");
        let ca_key = KeyPair::generate()?;
        let ca = params.self_signed(&ca_key)?;
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()])?;
        params
            .distinguished_name
            .push(DnType::CommonName, "soak instance");
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &ca, &ca_key)?;

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = vec![CertificateDer::from_pem_slice(cert.pem().as_bytes())?];
        let key = PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes())?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Pki {
            ca: ca.pem(),
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }
}
