//! [`Tls`]: the trust roots, client identity and protocol versions of a client's connections.

use std::path::PathBuf;

use super::pem::{Pem, Secret};
use crate::Error;

/// A TLS protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum TlsVersion {
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
}

impl TlsVersion {
    fn to_reqwest(self) -> reqwest::tls::Version {
        match self {
            TlsVersion::Tls12 => reqwest::tls::Version::TLS_1_2,
            TlsVersion::Tls13 => reqwest::tls::Version::TLS_1_3,
        }
    }
}

/// TLS settings of a client: which certificate authorities it trusts, the certificate it shows
/// for mutual TLS, and the protocol versions it speaks (rustls: TLS 1.2 and 1.3).
///
/// Files are read, and certificates and keys checked, when the client is built: a file that
/// cannot be read, PEM holding no certificate, or a key that does not match its certificate is
/// an error from `build()` naming the file. `Debug` never shows key material.
///
/// ```
/// use feign_core::transport::{Tls, TlsVersion};
///
/// let tls = Tls::new()
///     .ca_file("certs/internal-ca.pem")
///     .identity_files("certs/client.pem", "certs/client-key.pem")
///     .min_version(TlsVersion::Tls13);
/// # let _ = tls;
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct Tls {
    roots: Vec<Pem>,
    built_in_roots: Option<bool>,
    identity: Option<(Pem, Pem)>,
    key_password: Option<Secret>,
    min_version: Option<TlsVersion>,
    max_version: Option<TlsVersion>,
    accept_invalid_certs: bool,
}

impl Tls {
    /// The defaults: the built-in public roots (webpki-roots), no client certificate, TLS 1.2
    /// and 1.3, certificates checked.
    pub fn new() -> Self {
        Tls::default()
    }

    /// Trusts the certificate authorities in `pem` (one or more `CERTIFICATE` blocks). Once a
    /// CA is given, only the given CAs are trusted (as with a Spring trust store) unless
    /// [`built_in_roots`](Tls::built_in_roots) is turned back on. Default: none.
    pub fn ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.roots.push(Pem::bytes(pem, "the CA PEM given in code"));
        self
    }

    /// Like [`Tls::ca_pem`], read from a file when the client is built.
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.roots.push(Pem::File(path.into()));
        self
    }

    /// Whether the built-in public roots are trusted too. Default: true without a CA given,
    /// false with one.
    pub fn built_in_roots(mut self, trust: bool) -> Self {
        self.built_in_roots = Some(trust);
        self
    }

    /// The client certificate for mutual TLS: `cert_pem` holds the certificate first, then
    /// any intermediates; `key_pem` its private key (PKCS#8, PKCS#1 or SEC1; an encrypted
    /// PKCS#8 key needs [`key_password`](Tls::key_password)).
    /// Default: none.
    pub fn identity_pem(
        mut self,
        cert_pem: impl Into<Vec<u8>>,
        key_pem: impl Into<Vec<u8>>,
    ) -> Self {
        self.identity = Some((
            Pem::bytes(cert_pem, "the client certificate PEM given in code"),
            Pem::bytes(key_pem, "the private key PEM given in code"),
        ));
        self
    }

    /// Like [`Tls::identity_pem`], read from files when the client is built.
    pub fn identity_files(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        self.identity = Some((Pem::File(cert.into()), Pem::File(key.into())));
        self
    }

    /// The password of an encrypted PKCS#8 private key (`ENCRYPTED PRIVATE KEY`, PBES2 with
    /// PBKDF2 or scrypt and AES-CBC, as `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes it).
    /// A wrong password is an error from `build()`; the password is never shown. Default: none.
    pub fn key_password(mut self, password: impl Into<String>) -> Self {
        self.key_password = Some(Secret(password.into().into()));
        self
    }

    /// The oldest version spoken. Default [`TlsVersion::Tls12`].
    pub fn min_version(mut self, version: TlsVersion) -> Self {
        self.min_version = Some(version);
        self
    }

    /// The newest version spoken. Default [`TlsVersion::Tls13`].
    pub fn max_version(mut self, version: TlsVersion) -> Self {
        self.max_version = Some(version);
        self
    }

    /// **Turns certificate checks off**: any certificate is accepted, expired, self-signed or
    /// for another host, so anyone on the path can read and change the traffic. For a test
    /// environment only; the client's `build()` logs a warning when it is on. Default false.
    pub fn danger_accept_invalid_certs(mut self, accept: bool) -> Self {
        self.accept_invalid_certs = accept;
        self
    }

    /// Whether certificate checks are off.
    pub fn accepts_invalid_certs(&self) -> bool {
        self.accept_invalid_certs
    }

    #[cfg(feature = "config")]
    pub(crate) fn set_ca(&mut self, pem: Pem) {
        self.roots.push(pem);
    }

    #[cfg(feature = "config")]
    pub(crate) fn set_identity(&mut self, cert: Pem, key: Pem) {
        self.identity = Some((cert, key));
    }

    /// Reads and checks the material, and sets it on `builder`.
    pub(crate) fn apply(
        &self,
        mut builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, Error> {
        for pem in &self.roots {
            for der in pem.certificates()? {
                let certificate = reqwest::Certificate::from_der(&der).map_err(|e| {
                    Error::builder(format!("unusable CA certificate in {pem:?}")).with_source(e)
                })?;
                builder = builder.add_root_certificate(certificate);
            }
        }
        let built_in = self.built_in_roots.unwrap_or(self.roots.is_empty());
        builder = builder.tls_built_in_root_certs(built_in);
        if let Some((cert, key)) = &self.identity {
            builder = builder.identity(identity(cert, key, self.key_password.as_ref())?);
        }
        if let (Some(min), Some(max)) = (self.min_version, self.max_version) {
            if min > max {
                return Err(Error::builder(format!(
                    "TLS minimum version {min:?} is above the maximum {max:?}"
                )));
            }
        }
        if let Some(min) = self.min_version {
            builder = builder.min_tls_version(min.to_reqwest());
        }
        if let Some(max) = self.max_version {
            builder = builder.max_tls_version(max.to_reqwest());
        }
        if self.accept_invalid_certs {
            builder = builder.danger_accept_invalid_certs(true);
        }
        Ok(builder)
    }
}

/// The client identity of `cert` and `key`, checked to belong together.
fn identity(cert: &Pem, key: &Pem, password: Option<&Secret>) -> Result<reqwest::Identity, Error> {
    let chain = cert.certificates()?;
    let private_key = key.private_key(password)?;
    let provider = rustls::crypto::ring::default_provider();
    let signing_key = provider
        .key_provider
        .load_private_key(private_key.clone_key())
        .map_err(|e| {
            Error::builder(format!("the private key in {key:?} cannot sign")).with_source(e)
        })?;
    let certified = rustls::sign::CertifiedKey::new(chain.clone(), signing_key);
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {}
        Err(e) => {
            return Err(Error::builder(format!(
                "the private key in {key:?} does not match the certificate in {cert:?}"
            ))
            .with_source(e))
        }
    }
    let mut pem = Vec::new();
    for der in &chain {
        pem.extend_from_slice(&pem_block("CERTIFICATE", der));
    }
    let label = match &private_key {
        rustls::pki_types::PrivateKeyDer::Pkcs1(_) => "RSA PRIVATE KEY",
        rustls::pki_types::PrivateKeyDer::Sec1(_) => "EC PRIVATE KEY",
        _ => "PRIVATE KEY",
    };
    pem.extend_from_slice(&pem_block(label, private_key.secret_der()));
    reqwest::Identity::from_pem(&pem)
        .map_err(|e| Error::builder(format!("unusable client identity {cert:?}")).with_source(e))
}

/// One PEM block, as reqwest's `Identity::from_pem` reads them.
fn pem_block(label: &str, der: &[u8]) -> Vec<u8> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n").into_bytes();
    for line in encoded.as_bytes().chunks(64) {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.extend_from_slice(format!("-----END {label}-----\n").as_bytes());
    out
}
