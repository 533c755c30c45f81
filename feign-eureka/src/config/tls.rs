//! `eureka.client.tls.*`: Spring Cloud Netflix's TLS settings for the Eureka servers, with PEM
//! files where it takes key stores, or a Spring Boot PEM SSL bundle by name; and
//! `eureka.client.proxy-*`, the proxy in front of them.

use feign_config::{Config, ConfigError, Property};
use feign_core::transport::{Proxy, Tls};

use super::keys::KEYS;

/// The TLS settings of the `eureka.client.tls.*` properties, `None` unless `enabled` is true
/// (as in Spring, the other keys are then checked but not used).
pub(super) fn tls(config: &Config, properties: &[Property]) -> Result<Option<Tls>, ConfigError> {
    let mut enabled = false;
    let mut tls = Tls::new();
    let mut bundle = None;
    for property in properties {
        let store_type = || -> Result<(), ConfigError> {
            property
                .as_choice(&[("PEM", ())])
                .map_err(|_| {
                    property.error(
                        "only PEM stores are read: convert the store (`openssl pkcs12 -in store.p12 -out store.pem -nodes`), or use ssl-bundle",
                    )
                })
        };
        match property
            .name()
            .strip_prefix("eureka.client.tls.")
            .unwrap_or_default()
        {
            "enabled" => enabled = property.as_bool()?,
            "keystore" => {
                // One PEM file holding the certificate chain and its private key.
                let path = pem_path(property)?;
                tls = tls.identity_files(&path, &path);
            }
            "truststore" => tls = tls.ca_file(pem_path(property)?),
            "keystoretype" | "truststoretype" => store_type()?,
            // The password of an encrypted PKCS#8 key in the PEM key store.
            "keystorepassword" | "keypassword" => tls = tls.key_password(property.as_str()),
            // A PEM trust store has no password; Spring's default configs often carry one.
            "truststorepassword" => {}
            "sslbundle" => bundle = Some(Tls::from_ssl_bundle(config, property)?),
            _ => KEYS.unbound(property)?,
        }
    }
    Ok(enabled.then(|| bundle.unwrap_or(tls)))
}

/// A PEM file's path (`file:` prefix optional).
fn pem_path(property: &Property) -> Result<String, ConfigError> {
    let value = property.as_non_empty()?;
    if value.starts_with("classpath:") {
        return Err(property.error("a classpath: location has no meaning here: give a file path"));
    }
    Ok(value.strip_prefix("file:").unwrap_or(&value).to_owned())
}

/// The proxy of `eureka.client.proxy-host`, `proxy-port`, `proxy-user-name` and
/// `proxy-password` (Netflix's `EurekaClientConfig`), if a host is given.
pub(super) fn proxy(properties: &[Property]) -> Result<Option<Proxy>, ConfigError> {
    let (mut host, mut port, mut user, mut password) = (None, None, None, None);
    for property in properties {
        match property.name() {
            "eureka.client.proxyhost" => host = Some(property.as_non_empty()?),
            "eureka.client.proxyport" => port = Some((property.as_number::<u16>()?, property)),
            "eureka.client.proxyusername" => user = Some(property.as_str()),
            "eureka.client.proxypassword" => password = Some(property.as_str()),
            _ => KEYS.unbound(property)?,
        }
    }
    let Some(host) = host else {
        if let Some((_, property)) = port {
            return Err(property.error("a proxy port without eureka.client.proxy-host"));
        }
        return Ok(None);
    };
    let port = port.map_or(80, |(port, _)| port);
    let proxy = Proxy::all(format!("http://{host}:{port}"));
    Ok(Some(match user {
        Some(user) => proxy.basic_auth(user, password.unwrap_or_default()),
        None => proxy,
    }))
}
