//! Spring Boot's PEM SSL bundles (`spring.ssl.bundle.pem.<name>.*`) as [`Tls`] settings
//! (feature `config`).

use std::path::PathBuf;

use feign_config::{Config, ConfigError, Property};

use super::pem::Pem;
use super::{Tls, TlsVersion};

impl Tls {
    /// The TLS settings of the Spring Boot PEM SSL bundle that `reference` names (its value is
    /// the bundle's name): `spring.ssl.bundle.pem.<name>.*`.
    ///
    /// | bundle property | setting |
    /// |---|---|
    /// | `truststore.certificate` | [`Tls::ca_file`] / [`Tls::ca_pem`] |
    /// | `keystore.certificate`, `keystore.private-key` | [`Tls::identity_files`] / [`Tls::identity_pem`] |
    /// | `keystore.private-key-password` | [`Tls::key_password`] (encrypted PKCS#8 keys) |
    /// | `options.enabled-protocols` (`TLSv1.2`, `TLSv1.3`) | [`Tls::min_version`], [`Tls::max_version`] |
    /// | `protocol` | `TLS` only |
    /// | `keystore.verify-keys` | accepted: a key is always checked against its certificate |
    /// | `reload-on-update` | `false` only |
    ///
    /// A value is a file (`file:` prefix optional, relative to the working directory) or the
    /// PEM text itself. `classpath:` locations, `options.ciphers` (rustls's suites are fixed), `key.alias`/`key.password` and a missing
    /// bundle (or a `jks` one) are errors naming the property.
    pub fn from_ssl_bundle(config: &Config, reference: &Property) -> Result<Tls, ConfigError> {
        let name = reference.as_non_empty()?;
        let prefix = format!("spring.ssl.bundle.pem.{name}");
        let properties = config.section(&prefix)?;
        if properties.is_empty() {
            let why = if config
                .section(&format!("spring.ssl.bundle.jks.{name}"))?
                .is_empty()
            {
                format!("no SSL bundle `{name}` under spring.ssl.bundle.pem")
            } else {
                format!("SSL bundle `{name}` is a JKS bundle; only PEM bundles (spring.ssl.bundle.pem) are supported")
            };
            return Err(reference.error(why));
        }
        let mut tls = Tls::new();
        let (mut cert, mut key) = (None, None);
        for property in &properties {
            match property.rest().as_str() {
                "truststore.certificate" => tls.set_ca(location(property)?),
                "keystore.certificate" => cert = Some((location(property)?, property.clone())),
                "keystore.privatekey" => key = Some((location(property)?, property.clone())),
                "keystore.privatekeypassword" => tls = tls.key_password(property.as_str()),
                "keystore.verifykeys" => {
                    property.as_bool()?;
                }
                "options.enabledprotocols" => {
                    let (min, max) = versions(property)?;
                    tls = tls.min_version(min).max_version(max);
                }
                "protocol" => {
                    property.as_choice(&[("TLS", ())])?;
                }
                "reloadonupdate" => {
                    if property.as_bool()? {
                        return Err(property.error(
                            "not supported: certificates are read when the client is built",
                        ));
                    }
                }
                "options.ciphers" => {
                    return Err(property
                        .error("not supported: the cipher suites are rustls's safe defaults"))
                }
                "key.alias" | "key.password" => {
                    return Err(property.error("not supported: a PEM bundle holds one key"))
                }
                _ => return Err(property.unknown()),
            }
        }
        match (cert, key) {
            (Some((cert, _)), Some((key, _))) => tls.set_identity(cert, key),
            (Some((_, property)), None) => {
                return Err(property.error("a certificate without keystore.private-key"))
            }
            (None, Some((_, property))) => {
                return Err(property.error("a private key without keystore.certificate"))
            }
            (None, None) => {}
        }
        Ok(tls)
    }
}

/// A PEM location or the PEM text itself.
fn location(property: &Property) -> Result<Pem, ConfigError> {
    let value = property.as_non_empty()?;
    let value = value.trim();
    if value.starts_with("-----BEGIN") {
        return Ok(Pem::bytes(
            value.as_bytes(),
            &format!("`{}`", property.key()),
        ));
    }
    if value.starts_with("classpath:") {
        return Err(property
            .error("a classpath: location has no meaning here: give a file path (or file:path)"));
    }
    let path = value.strip_prefix("file:").unwrap_or(value);
    Ok(Pem::File(PathBuf::from(path)))
}

/// The lowest and highest TLS versions of a list of Java protocol names (`TLSv1.2`,
/// `TLSv1.3`); older versions are never spoken (rustls), so they are skipped, and a list of
/// only those is an error.
fn versions(property: &Property) -> Result<(TlsVersion, TlsVersion), ConfigError> {
    let mut listed = Vec::new();
    for name in property.as_list() {
        match name.trim() {
            "TLSv1.3" => listed.push(TlsVersion::Tls13),
            "TLSv1.2" => listed.push(TlsVersion::Tls12),
            "TLSv1.1" | "TLSv1" | "SSLv3" => {}
            other => {
                return Err(property.error(format!(
                    "unknown protocol `{other}`: expected TLSv1.2 or TLSv1.3"
                )))
            }
        }
    }
    match (listed.iter().min(), listed.iter().max()) {
        (Some(min), Some(max)) => Ok((*min, *max)),
        _ => Err(property.error("no protocol that can be spoken: TLSv1.2 and TLSv1.3 are")),
    }
}
