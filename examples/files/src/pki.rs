//! The example's own certificate authority, made in memory at start: it signs the certificate
//! the registry and the file-service instances serve (for `127.0.0.1`) and the one the client
//! shows them (mutual TLS). Nothing is written to disk.

use feign_core::transport::Tls;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

use quickstart::StepResult;

/// A certificate and its private key, both PEM.
#[derive(Clone)]
pub(crate) struct CertKey {
    pub(crate) cert: String,
    pub(crate) key: String,
}

/// The CA's certificate and the two certificates it signed.
pub(crate) struct Pki {
    pub(crate) ca: String,
    pub(crate) server: CertKey,
    pub(crate) client: CertKey,
}

impl Pki {
    /// A fresh CA, a server certificate for `127.0.0.1` and a client certificate.
    pub(crate) fn new() -> StepResult<Pki> {
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "files example CA");
        let ca_key = KeyPair::generate()?;
        let ca = params.self_signed(&ca_key)?;
        let sign = |names: Vec<String>, name: &str| -> StepResult<CertKey> {
            let mut params = CertificateParams::new(names)?;
            params.distinguished_name.push(DnType::CommonName, name);
            let key = KeyPair::generate()?;
            let cert = params.signed_by(&key, &ca, &ca_key)?;
            Ok(CertKey {
                cert: cert.pem(),
                key: key.serialize_pem(),
            })
        };
        Ok(Pki {
            server: sign(vec!["127.0.0.1".to_owned()], "file-service")?,
            client: sign(Vec::new(), "files-client")?,
            ca: ca.pem(),
        })
    }

    /// What every client here uses: only this CA is trusted, and the client certificate is
    /// shown to servers that ask for one.
    pub(crate) fn client_tls(&self) -> Tls {
        Tls::new()
            .ca_pem(self.ca.as_bytes())
            .identity_pem(self.client.cert.as_bytes(), self.client.key.as_bytes())
    }
}
