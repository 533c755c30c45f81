//! Spring Boot property names for the client, read from `application.yml`,
//! `application.properties` or the environment, so a team can carry its settings over.
//!
//! | property | builder setting |
//! |---|---|
//! | `eureka.client.service-url.<zone>` (comma-separated) | [`EurekaClientBuilder::zone_service_urls`] |
//! | `eureka.client.availability-zones.<region>` (first = own zone) | [`EurekaClientBuilder::preferred_zone`] |
//! | `eureka.client.region` | accepted, informational |
//! | `eureka.client.register-with-eureka` | register or not (default `true` when an application name is known) |
//! | `eureka.client.fetch-registry` | [`EurekaClientBuilder::fetch_registry`] |
//! | `eureka.client.registry-fetch-interval-seconds` | [`EurekaClientBuilder::registry_fetch_interval`] |
//! | `eureka.client.disable-delta` | [`EurekaClientBuilder::disable_delta`] |
//! | `eureka.client.filter-only-up-instances` | [`EurekaClientBuilder::filter_only_up_instances`] |
//! | `eureka.client.eureka-server-connect-timeout-seconds` | [`EurekaClientBuilder::connect_timeout`] |
//! | `eureka.client.eureka-server-read-timeout-seconds` | [`EurekaClientBuilder::read_timeout`] |
//! | `eureka.client.heartbeat-executor-exponential-back-off-bound`, `…cache-refresh-executor-exponential-back-off-bound` | [`EurekaClientBuilder::backoff_bound`] |
//! | `eureka.client.prefer-same-zone-eureka` | accepted (always preferred) |
//! | `eureka.client.should-enforce-fetch-registry-at-init` | [`EurekaClientBuilder::enforce_fetch_at_init`] |
//! | `spring.application.name`, `eureka.instance.appname` | the application name |
//! | `server.port`, `eureka.instance.non-secure-port` | the port (default 8080) |
//! | `eureka.instance.non-secure-port-enabled`, `secure-port`, `secure-port-enabled` | ports |
//! | `eureka.instance.hostname`, `ip-address`, `prefer-ip-address`, `instance-id` | address and id |
//! | `eureka.instance.metadata-map.<key>` | metadata |
//! | `eureka.instance.lease-renewal-interval-in-seconds`, `lease-expiration-duration-in-seconds` | lease |
//! | `eureka.instance.virtual-host-name`, `secure-virtual-host-name` | VIP addresses |
//! | `eureka.instance.home-page-url`, `status-page-url`, `status-page-url-path`, `health-check-url`, `health-check-url-path` | URLs |
//! | `eureka.instance.initial-status` | initial status |
//!
//! Names follow Spring's relaxed binding: `service-url`, `serviceUrl` and `service_url` are the
//! same key. Environment variables use Spring's form: upper case, `.` → `_`, dashes removed
//! (`EUREKA_CLIENT_SERVICEURL_DEFAULTZONE`, `EUREKA_CLIENT_REGISTRYFETCHINTERVALSECONDS`,
//! `EUREKA_INSTANCE_METADATAMAP_ZONE`, `SPRING_APPLICATION_NAME`, `SERVER_PORT`). Simple
//! `${key}` and `${key:default}` placeholders are resolved. Keys outside `eureka.` are ignored
//! (an `application.yml` holds much else), as are `eureka.server.*` and `eureka.dashboard.*`
//! (registry settings); any other `eureka.` key that is not in the table is an error naming it.
//! `eureka.client.backup-registry-impl` is an error too, saying why: it names a Java class, so a
//! backup registry is given with [`EurekaClientBuilder::backup_registry`] instead.
//!
//! ```
//! use feign_eureka::SpringConfig;
//!
//! let yaml = r#"
//! spring:
//!   application:
//!     name: order-service
//! server:
//!   port: 8080
//! eureka:
//!   client:
//!     service-url:
//!       defaultZone: http://127.0.0.1:8761/eureka/
//!     registry-fetch-interval-seconds: 5
//!   instance:
//!     prefer-ip-address: true
//!     ip-address: 10.0.0.5
//!     instance-id: ${spring.application.name}:${server.port}
//!     metadata-map:
//!       zone: zone-a
//! "#;
//! let builder = SpringConfig::from_yaml_str(yaml)?.builder()?;
//! # let _ = builder;
//! let err = SpringConfig::from_yaml_str("eureka:\n  client:\n    registry-fetch-interval: 5\n")?
//!     .builder()
//!     .unwrap_err();
//! assert!(err.to_string().contains("eureka.client.registry-fetch-interval"));
//! # Ok::<(), feign_eureka::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use crate::model::InstanceStatus;
use crate::{Error, EurekaClientBuilder, InstanceConfig};

/// A set of Spring-style properties, turned into a client builder by [`SpringConfig::builder`].
///
/// Later sources override earlier ones: `SpringConfig::from_file(path)?.merge_env()` lets the
/// environment win over the file, as in Spring.
#[derive(Clone, Debug, Default)]
pub struct SpringConfig {
    /// `(key, value)` in the order they were read; later entries override earlier ones.
    values: Vec<(String, String)>,
}

/// A key reduced for relaxed comparison: lower case, `-` and `_` removed.
fn relaxed(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

fn config_error(key: &str, reason: impl Into<String>) -> Error {
    Error::Config {
        key: key.to_owned(),
        reason: reason.into(),
    }
}

fn flatten(prefix: &str, value: &serde_yaml::Value, out: &mut Vec<(String, String)>) {
    use serde_yaml::Value;
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_owned()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match value {
        Value::Mapping(map) => {
            for (k, v) in map {
                let key = match k {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => continue,
                };
                flatten(&join(&key), v, out);
            }
        }
        Value::Sequence(items) => {
            let parts: Vec<String> = items
                .iter()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    Value::Bool(b) => Some(b.to_string()),
                    _ => None,
                })
                .collect();
            out.push((prefix.to_owned(), parts.join(",")));
        }
        Value::String(s) => {
            out.push((prefix.to_owned(), s.clone()));
        }
        Value::Number(n) => {
            out.push((prefix.to_owned(), n.to_string()));
        }
        Value::Bool(b) => {
            out.push((prefix.to_owned(), b.to_string()));
        }
        Value::Null => {
            out.push((prefix.to_owned(), String::new()));
        }
        Value::Tagged(tagged) => flatten(prefix, &tagged.value, out),
    }
}

impl SpringConfig {
    /// No properties.
    pub fn new() -> Self {
        SpringConfig::default()
    }

    /// Reads an `application.yml` document.
    pub fn from_yaml_str(yaml: &str) -> Result<Self, Error> {
        let value: serde_yaml::Value =
            serde_yaml::from_str(yaml).map_err(|e| Error::ConfigFile(e.to_string()))?;
        let mut values = Vec::new();
        if !value.is_null() {
            flatten("", &value, &mut values);
        }
        Ok(SpringConfig { values })
    }

    /// Reads an `application.properties` document (`key=value` or `key: value` lines; `#` and
    /// `!` start comments; no line continuations).
    pub fn from_properties_str(text: &str) -> Result<Self, Error> {
        let mut values = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            let Some(split) = line.find(['=', ':']) else {
                return Err(Error::ConfigFile(format!(
                    "line {}: expected `key=value`",
                    n + 1
                )));
            };
            let (key, value) = (line[..split].trim(), line[split + 1..].trim());
            if key.is_empty() {
                return Err(Error::ConfigFile(format!("line {}: empty key", n + 1)));
            }
            values.push((key.to_owned(), value.to_owned()));
        }
        Ok(SpringConfig { values })
    }

    /// Reads a file: YAML for `.yml`/`.yaml`, properties otherwise.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::ConfigFile(format!("{}: {e}", path.display())))?;
        match path.extension().and_then(|e| e.to_str()) {
            Some("yml" | "yaml") => Self::from_yaml_str(&text),
            _ => Self::from_properties_str(&text),
        }
    }

    /// Sets one property (overriding an earlier value).
    #[must_use]
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.values.push((key.into(), value.into()));
        self
    }

    /// Adds the process environment's `EUREKA_*`, `SPRING_APPLICATION_NAME` and `SERVER_PORT`
    /// variables, overriding earlier values.
    #[must_use]
    pub fn merge_env(self) -> Self {
        self.merge_env_vars(std::env::vars())
    }

    /// Like [`SpringConfig::merge_env`], from the given variables.
    #[must_use]
    pub fn merge_env_vars<I: IntoIterator<Item = (String, String)>>(mut self, vars: I) -> Self {
        for (name, value) in vars {
            let relevant = name.starts_with("EUREKA_")
                || name == "SPRING_APPLICATION_NAME"
                || name == "SERVER_PORT";
            if relevant {
                self.values
                    .push((name.to_ascii_lowercase().replace('_', "."), value));
            }
        }
        self
    }

    /// The value of a property (relaxed name comparison, placeholders resolved).
    pub fn get(&self, key: &str) -> Option<String> {
        let wanted = relaxed(key);
        self.values
            .iter()
            .rev()
            .find(|(k, _)| relaxed(k) == wanted)
            .map(|(_, v)| self.resolve(v))
    }

    /// Resolves `${key}` and `${key:default}` placeholders (a few levels deep).
    fn resolve(&self, value: &str) -> String {
        let mut out = value.to_owned();
        for _ in 0..8 {
            let Some(start) = out.find("${") else { break };
            let Some(len) = out[start..].find('}') else {
                break;
            };
            let inner = &out[start + 2..start + len];
            let (key, default) = match inner.split_once(':') {
                Some((k, d)) => (k, Some(d)),
                None => (inner, None),
            };
            let wanted = relaxed(key);
            let found = self
                .values
                .iter()
                .rev()
                .find(|(k, _)| relaxed(k) == wanted)
                .map(|(_, v)| v.clone());
            let replacement = found.or(default.map(str::to_owned)).unwrap_or_default();
            out.replace_range(start..start + len + 1, &replacement);
        }
        out
    }

    /// Builds a client builder from these properties; an unknown `eureka.` key or a value
    /// that does not parse is an error naming the key.
    pub fn builder(&self) -> Result<EurekaClientBuilder, Error> {
        let mut builder = EurekaClientBuilder::default();
        let mut instance = InstanceSettings::default();
        let mut register: Option<bool> = None;
        let mut latest: BTreeMap<String, (&str, &str)> = BTreeMap::new();
        for (key, value) in &self.values {
            latest.insert(relaxed(key), (key, value));
        }
        for (key, raw) in latest.into_values() {
            let value = self.resolve(raw);
            let lower = relaxed(key);
            let segments: Vec<&str> = key.split('.').collect();
            let rest = |n: usize| segments.get(n..).map(|s| s.join(".")).unwrap_or_default();
            let parse_bool = |v: &str| {
                bool::from_str(v.trim())
                    .map_err(|_| config_error(key, format!("expected true or false, got {v:?}")))
            };
            let parse_secs = |v: &str| {
                v.trim()
                    .parse::<u64>()
                    .map(Duration::from_secs)
                    .map_err(|_| config_error(key, format!("expected whole seconds, got {v:?}")))
            };
            let parse_u32 = |v: &str| {
                v.trim()
                    .parse::<u32>()
                    .map_err(|_| config_error(key, format!("expected a number, got {v:?}")))
            };
            let parse_port = |v: &str| {
                v.trim()
                    .parse::<u16>()
                    .map_err(|_| config_error(key, format!("expected a port, got {v:?}")))
            };

            if lower == "spring.application.name" {
                instance.app_name = Some(value);
                continue;
            }
            if lower == "server.port" {
                instance.server_port = Some(parse_port(&value)?);
                continue;
            }
            if !lower.starts_with("eureka.")
                || lower.starts_with("eureka.server.")
                || lower.starts_with("eureka.dashboard.")
            {
                continue;
            }
            if lower.starts_with("eureka.client.serviceurl.") && segments.len() > 3 {
                let zone = rest(3);
                let urls: Vec<&str> = value
                    .split(',')
                    .map(str::trim)
                    .filter(|u| !u.is_empty())
                    .collect();
                if urls.is_empty() {
                    return Err(config_error(key, "no url"));
                }
                builder = builder.zone_service_urls(&zone, urls);
                continue;
            }
            if lower.starts_with("eureka.client.availabilityzones.") && segments.len() > 3 {
                if let Some(first) = value.split(',').map(str::trim).find(|z| !z.is_empty()) {
                    instance.availability_zone = Some(first.to_owned());
                }
                continue;
            }
            if lower.starts_with("eureka.instance.metadatamap.") && segments.len() > 3 {
                instance.metadata.insert(rest(3), value);
                continue;
            }
            match lower.as_str() {
                "eureka.client.registerwitheureka" => register = Some(parse_bool(&value)?),
                "eureka.client.fetchregistry" => {
                    builder = builder.fetch_registry(parse_bool(&value)?)
                }
                "eureka.client.registryfetchintervalseconds" => {
                    builder = builder.registry_fetch_interval(parse_secs(&value)?)
                }
                "eureka.client.disabledelta" => {
                    builder = builder.disable_delta(parse_bool(&value)?)
                }
                "eureka.client.filteronlyupinstances" => {
                    builder = builder.filter_only_up_instances(parse_bool(&value)?)
                }
                "eureka.client.eurekaserverconnecttimeoutseconds" => {
                    builder = builder.connect_timeout(parse_secs(&value)?)
                }
                "eureka.client.eurekaserverreadtimeoutseconds" => {
                    builder = builder.read_timeout(parse_secs(&value)?)
                }
                "eureka.client.heartbeatexecutorexponentialbackoffbound"
                | "eureka.client.cacherefreshexecutorexponentialbackoffbound" => {
                    builder = builder.backoff_bound(parse_u32(&value)?)
                }
                "eureka.client.shouldenforcefetchregistryatinit" => {
                    builder = builder.enforce_fetch_at_init(parse_bool(&value)?)
                }
                "eureka.client.prefersameeureka" | "eureka.client.prefersamezoneeureka" => {
                    parse_bool(&value)?;
                }
                "eureka.client.region" => {}
                "eureka.instance.appname" => instance.app_name = Some(value),
                "eureka.instance.nonsecureport" => instance.port = Some(parse_port(&value)?),
                "eureka.instance.nonsecureportenabled" => {
                    instance.port_enabled = Some(parse_bool(&value)?)
                }
                "eureka.instance.secureport" => instance.secure_port = Some(parse_port(&value)?),
                "eureka.instance.secureportenabled" => {
                    instance.secure_port_enabled = Some(parse_bool(&value)?)
                }
                "eureka.instance.hostname" => instance.host_name = Some(value),
                "eureka.instance.ipaddress" => instance.ip_address = Some(value),
                "eureka.instance.preferipaddress" => instance.prefer_ip = Some(parse_bool(&value)?),
                "eureka.instance.instanceid" => instance.instance_id = Some(value),
                "eureka.instance.leaserenewalintervalinseconds" => {
                    instance.renewal = Some(parse_secs(&value)?)
                }
                "eureka.instance.leaseexpirationdurationinseconds" => {
                    instance.expiration = Some(parse_secs(&value)?)
                }
                "eureka.instance.virtualhostname" => instance.vip = Some(value),
                "eureka.instance.securevirtualhostname" => instance.secure_vip = Some(value),
                "eureka.instance.homepageurl" => instance.home_page_url = Some(value),
                "eureka.instance.statuspageurl" => instance.status_page_url = Some(value),
                "eureka.instance.statuspageurlpath" => instance.status_page_path = Some(value),
                "eureka.instance.healthcheckurl" => instance.health_check_url = Some(value),
                "eureka.instance.healthcheckurlpath" => instance.health_check_path = Some(value),
                "eureka.instance.initialstatus" => {
                    instance.initial_status = Some(
                        InstanceStatus::from_str(value.trim())
                            .map_err(|e| config_error(key, e.to_string()))?,
                    )
                }
                "eureka.client.backupregistryimpl" => {
                    return Err(config_error(
                        key,
                        "names a Java class; give a BackupRegistry to \
                         EurekaClientBuilder::backup_registry instead",
                    ))
                }
                _ => return Err(config_error(key, "unknown eureka property")),
            }
        }
        if let Some(zone) = &instance.availability_zone {
            builder = builder.preferred_zone(zone.clone());
        }
        match (register, instance.app_name.clone()) {
            (Some(false), _) => {}
            (_, Some(name)) => builder = builder.instance(instance.into_config(&name)),
            (Some(true), None) => {
                return Err(config_error(
                    "eureka.client.register-with-eureka",
                    "registration needs spring.application.name or eureka.instance.appname",
                ))
            }
            (None, None) => {}
        }
        Ok(builder)
    }
}

#[derive(Default)]
struct InstanceSettings {
    app_name: Option<String>,
    server_port: Option<u16>,
    port: Option<u16>,
    port_enabled: Option<bool>,
    secure_port: Option<u16>,
    secure_port_enabled: Option<bool>,
    host_name: Option<String>,
    ip_address: Option<String>,
    prefer_ip: Option<bool>,
    instance_id: Option<String>,
    metadata: BTreeMap<String, String>,
    renewal: Option<Duration>,
    expiration: Option<Duration>,
    vip: Option<String>,
    secure_vip: Option<String>,
    home_page_url: Option<String>,
    status_page_url: Option<String>,
    status_page_path: Option<String>,
    health_check_url: Option<String>,
    health_check_path: Option<String>,
    initial_status: Option<InstanceStatus>,
    availability_zone: Option<String>,
}

/// Applies one string setting to an instance configuration.
type Setter = fn(InstanceConfig, String) -> InstanceConfig;

impl InstanceSettings {
    fn into_config(self, app_name: &str) -> InstanceConfig {
        let port = self.port.or(self.server_port).unwrap_or(8080);
        let mut config = InstanceConfig::new(app_name, port);
        if let Some(enabled) = self.port_enabled {
            config = config.non_secure_port_enabled(enabled);
        }
        if let Some(secure_port) = self.secure_port {
            config = config.secure_port(secure_port);
            if self.secure_port_enabled == Some(false) {
                config = config.secure_port_disabled();
            }
        } else if self.secure_port_enabled == Some(true) {
            config = config.secure_port(443);
        }
        let optional: [(Option<String>, Setter); 10] = [
            (self.host_name, |c, v| c.host_name(v)),
            (self.ip_address, |c, v| c.ip_address(v)),
            (self.instance_id, |c, v| c.instance_id(v)),
            (self.vip, |c, v| c.vip_address(v)),
            (self.secure_vip, |c, v| c.secure_vip_address(v)),
            (self.home_page_url, |c, v| c.home_page_url(v)),
            (self.status_page_url, |c, v| c.status_page_url(v)),
            (self.status_page_path, |c, v| c.status_page_path(v)),
            (self.health_check_url, |c, v| c.health_check_url(v)),
            (self.health_check_path, |c, v| c.health_check_path(v)),
        ];
        for (value, apply) in optional {
            if let Some(value) = value {
                config = apply(config, value);
            }
        }
        if let Some(prefer) = self.prefer_ip {
            config = config.prefer_ip_address(prefer);
        }
        for (key, value) in self.metadata {
            config = config.metadata(key, value);
        }
        if let Some(renewal) = self.renewal {
            config = config.lease_renewal_interval(renewal);
        }
        if let Some(expiration) = self.expiration {
            config = config.lease_expiration_duration(expiration);
        }
        if let Some(status) = self.initial_status {
            config = config.initial_status(status);
        }
        config
    }
}
