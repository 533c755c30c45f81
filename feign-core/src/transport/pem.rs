//! PEM material given in code or named by a file: read and checked when a client is built, so a
//! missing file, a key that does not match its certificate or PEM holding nothing usable is an
//! error from `build()`, not from the first call.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::Error;

/// Where PEM text comes from: bytes given in code, or a file read when the client is built.
#[derive(Clone)]
pub(crate) enum Pem {
    /// PEM text, and what to call it in errors.
    Bytes(Arc<[u8]>, Arc<str>),
    /// A file, read at build time.
    File(PathBuf),
}

impl Pem {
    /// PEM text given in code, named `name` in errors.
    pub(crate) fn bytes(pem: impl Into<Vec<u8>>, name: &str) -> Pem {
        Pem::Bytes(pem.into().into(), name.into())
    }

    /// What errors call it: the file's path, or the name it was given with.
    fn name(&self) -> String {
        match self {
            Pem::Bytes(_, name) => name.to_string(),
            Pem::File(path) => format!("`{}`", path.display()),
        }
    }

    /// The PEM text.
    fn read(&self) -> Result<Arc<[u8]>, Error> {
        match self {
            Pem::Bytes(bytes, _) => Ok(bytes.clone()),
            Pem::File(path) => std::fs::read(path)
                .map(Into::into)
                .map_err(|e| Error::builder(format!("cannot read {}", self.name())).with_source(e)),
        }
    }

    /// Every certificate in it; none is an error.
    pub(crate) fn certificates(&self) -> Result<Vec<CertificateDer<'static>>, Error> {
        let text = self.read()?;
        let certificates = CertificateDer::pem_slice_iter(&text)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                Error::builder(format!("unreadable certificate PEM in {}", self.name()))
                    .with_source(e)
            })?;
        if certificates.is_empty() {
            return Err(Error::builder(format!("no certificate in {}", self.name())));
        }
        Ok(certificates)
    }

    /// Its private key (PKCS#8, PKCS#1 or SEC1). An encrypted key is an error saying so.
    pub(crate) fn private_key(&self) -> Result<PrivateKeyDer<'static>, Error> {
        let text = self.read()?;
        if contains(&text, b"-----BEGIN ENCRYPTED PRIVATE KEY-----") {
            return Err(Error::builder(format!(
                "the private key in {} is encrypted, which is not supported: decrypt it first \
                 (`openssl pkcs8 -in key.pem -out plain.pem`)",
                self.name()
            )));
        }
        PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
            Error::builder(format!(
                "no readable private key (PKCS#8, PKCS#1 or SEC1) in {}",
                self.name()
            ))
            .with_source(e)
        })
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

impl fmt::Debug for Pem {
    /// Never the text: a key must not reach a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
