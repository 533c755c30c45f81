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

    /// Its private key (PKCS#8, PKCS#1 or SEC1), decrypted with `password` when it is an
    /// encrypted PKCS#8 key (`ENCRYPTED PRIVATE KEY`, PBES2).
    pub(crate) fn private_key(
        &self,
        password: Option<&Secret>,
    ) -> Result<PrivateKeyDer<'static>, Error> {
        let text = self.read()?;
        if let Some(block) = block(&text, "ENCRYPTED PRIVATE KEY") {
            let Some(password) = password else {
                return Err(Error::builder(format!(
                    "the private key in {} is encrypted: give its password \
                     (`Tls::key_password`, or `keystore.private-key-password`)",
                    self.name()
                )));
            };
            return self.decrypt(block, password);
        }
        PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
            Error::builder(format!(
                "no readable private key (PKCS#8, PKCS#1 or SEC1) in {}",
                self.name()
            ))
            .with_source(e)
        })
    }

    /// The PKCS#8 key inside an `ENCRYPTED PRIVATE KEY` block.
    fn decrypt(&self, block: &[u8], password: &Secret) -> Result<PrivateKeyDer<'static>, Error> {
        let cannot = |why: &str| {
            Error::builder(format!(
                "cannot decrypt the private key in {}: {why}",
                self.name()
            ))
        };
        let (_, der) = pkcs8::der::pem::decode_vec(block)
            .map_err(|e| cannot("unreadable PEM").with_source(e.to_string()))?;
        let info = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice())
            .map_err(|e| cannot("not an encrypted PKCS#8 key").with_source(e))?;
        let plain = info.decrypt(password.0.as_bytes()).map_err(|e| {
            cannot("wrong password, or an encryption other than PBES2 (PBKDF2 or scrypt, AES-CBC)")
                .with_source(e)
        })?;
        Ok(PrivateKeyDer::Pkcs8(plain.as_bytes().to_vec().into()))
    }
}

/// A password, never shown.
#[derive(Clone)]
pub(crate) struct Secret(pub(crate) Arc<str>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The first PEM block labelled `label` in `text`, boundaries included.
fn block<'a>(text: &'a [u8], label: &str) -> Option<&'a [u8]> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = find(text, begin.as_bytes())?;
    let stop = start + find(&text[start..], end.as_bytes())? + end.len();
    Some(&text[start..stop])
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
impl fmt::Debug for Pem {
    /// Never the text: a key must not reach a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}
