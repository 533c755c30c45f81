//! Spring Boot property names for the client (feature `config`), read from `application.yml`,
//! `application.properties` or the environment, so a team can carry its settings over:
//! [`EurekaClientBuilder::config`] applies them to a builder, as feign-core's and feign-lb's
//! `Builder::config` do; [`SpringConfig`] loads them and makes a builder in one go.
//!
//! | property | builder setting |
//! |---|---|
//! | `eureka.client.enabled` | [`EurekaClientBuilder::enabled`]: `false` makes `start` return [`Error::Disabled`] (ask [`EurekaClientBuilder::is_enabled`] to run without Eureka, as Spring does) |
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
//! | `eureka.client.eureka-connection-idle-timeout-seconds` | how long an idle connection to a server is kept ([`feign_core::transport::HttpClientConfig::pool_idle_timeout`]) |
//! | `eureka.client.transport.sessioned-client-reconnect-interval-seconds` | [`EurekaClientBuilder::session_duration`] |
//! | `eureka.client.heartbeat-executor-exponential-back-off-bound`, `…cache-refresh-executor-exponential-back-off-bound` | [`EurekaClientBuilder::backoff_bound`] |
//! | `eureka.client.prefer-same-zone-eureka` | accepted (always preferred) |
//! | `eureka.client.should-enforce-fetch-registry-at-init` | [`EurekaClientBuilder::enforce_fetch_at_init`] |
//! | `eureka.client.healthcheck.enabled` | `false` ignores a [`EurekaClientBuilder::health_check`]; `true` without one makes `start` fail ([`Error::NoHealthCheck`]) |
//! | `eureka.client.on-demand-update-status-change` | [`EurekaClientBuilder::on_demand_update_status_change`] |
//! | `eureka.client.instance-info-replication-interval-seconds` | [`EurekaClientBuilder::instance_info_replication_interval`] |
//! | `eureka.client.registry-refresh-single-vip-address` (Spring's name), `registry-fetch-single-vip-address` | [`EurekaClientBuilder::registry_fetch_single_vip_address`] |
//! | `eureka.client.watch-enabled` (feign-rs's own: push discovery) | [`EurekaClientBuilder::watch`] |
//! | `eureka.client.watch-timeout-seconds` (feign-rs's own) | [`EurekaClientBuilder::watch_timeout`] |
//! | `spring.application.name`, `eureka.instance.appname` | the application name |
//! | `eureka.instance.app-group-name` | [`InstanceConfig::app_group_name`] |
//! | `server.port`, `eureka.instance.non-secure-port` | the port (default 8080) |
//! | `eureka.instance.non-secure-port-enabled`, `secure-port`, `secure-port-enabled` | ports |
//! | `eureka.instance.hostname`, `ip-address`, `prefer-ip-address`, `instance-id` | address and id |
//! | `eureka.instance.metadata-map.<key>` | metadata |
//! | `eureka.instance.lease-renewal-interval-in-seconds`, `lease-expiration-duration-in-seconds` | lease |
//! | `eureka.instance.virtual-host-name`, `secure-virtual-host-name` | VIP addresses |
//! | `eureka.instance.home-page-url`, `status-page-url`, `status-page-url-path`, `health-check-url`, `health-check-url-path` | URLs |
//! | `eureka.instance.initial-status` | initial status |
//! | `eureka.client.proxy-host`, `proxy-port`, `proxy-user-name`, `proxy-password` | [`EurekaClientBuilder::proxy`]: an HTTP proxy for every call to the registry, the password never shown |
//! | `eureka.client.tls.enabled` | the settings below are used only when `true` (as in Spring Cloud Netflix) |
//! | `eureka.client.tls.trust-store` | a PEM file of CA certificates: [`EurekaClientBuilder::tls`] with [`feign_core::transport::Tls::ca_file`] |
//! | `eureka.client.tls.key-store` | a PEM file holding the client certificate (then its chain) and its private key, for mutual TLS: [`feign_core::transport::Tls::identity_files`] |
//! | `eureka.client.tls.key-store-type`, `trust-store-type` | `PEM` only: convert a PKCS12 or JKS store with `openssl pkcs12 -nodes` |
//! | `eureka.client.tls.key-password` (or `key-store-password`) | the password of an encrypted PKCS#8 key in the key store: [`feign_core::transport::Tls::key_password`]; `trust-store-password` is accepted and unused |
//! | `eureka.client.tls.ssl-bundle` | the Spring Boot PEM SSL bundle `spring.ssl.bundle.pem.<name>.*` instead (see [`feign_core::transport::Tls::from_ssl_bundle`]) |
//!
//! Properties come from [`feign_config`], the property source shared with feign-core and
//! feign-lb: names follow Spring's relaxed binding (`service-url`, `serviceUrl` and
//! `service_url` are the same key), environment variables use Spring's form (upper case,
//! `.` → `_`, dashes removed: `EUREKA_CLIENT_SERVICEURL_DEFAULTZONE`,
//! `EUREKA_CLIENT_REGISTRYFETCHINTERVALSECONDS`, `EUREKA_INSTANCE_METADATAMAP_ZONE`,
//! `SPRING_APPLICATION_NAME`, `SERVER_PORT`), and `${key}` / `${key:default}` placeholders
//! are resolved (one with neither a value nor a default is an error). Keys outside `eureka.`
//! are not read (an `application.yml` holds much else). Every key under `eureka.` is checked
//! against one table (`src/config/keys.rs`): a Spring key the client accepts and ignores is
//! logged once at `WARN` (target `feign_config`), naming it and saying why (among them
//! `initial-instance-info-replication-interval-seconds`, `eureka-server-total-connections`,
//! `use-dns-for-fetching-service-urls: true`, `g-zip-content`, `jersey.enabled`,
//! `eureka.client.timeout.*`, `eureka.instance.home-page-url-path`, and the registry's own
//! `eureka.server.*`, `eureka.dashboard.*`, `eureka.instance.registry.*`); any other key that
//! is not in the table is an error naming it, the file (or environment variable) it came from
//! and the nearest known key. `…-seconds` properties take whole seconds, or a Spring duration
//! such as `30s` or `PT30S`. `eureka.client.backup-registry-impl` is an error too, saying why:
//! it names a Java class, so a backup registry is given with
//! [`EurekaClientBuilder::backup_registry`] instead.
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

mod keys;
mod tls;

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use feign_config::{Config, ConfigError, DurationUnit, Property};

use self::keys::KEYS;
use crate::model::InstanceStatus;
use crate::{Error, EurekaClientBuilder, InstanceConfig};

/// A set of Spring-style properties, turned into a client builder by [`SpringConfig::builder`].
///
/// Later sources override earlier ones: `SpringConfig::from_file(path)?.merge_env()` lets the
/// environment win over the file, as in Spring. [`SpringConfig::from_config`] takes the
/// [`Config`] an application already loaded for its clients and balancer.
#[derive(Clone, Debug, Default)]
pub struct SpringConfig {
    config: Config,
}

impl From<Config> for SpringConfig {
    fn from(config: Config) -> Self {
        SpringConfig { config }
    }
}

impl SpringConfig {
    /// No properties.
    pub fn new() -> Self {
        SpringConfig::default()
    }

    /// These properties from a shared [`Config`] (e.g. [`Config::load`]).
    pub fn from_config(config: Config) -> Self {
        SpringConfig { config }
    }

    /// The properties, to hand to other binders.
    pub fn as_config(&self) -> &Config {
        &self.config
    }

    /// Reads an `application.yml` document (named `YAML text` in errors).
    pub fn from_yaml_str(yaml: &str) -> Result<Self, Error> {
        Ok(Config::from_yaml_str(yaml, "YAML text")?.into())
    }

    /// Reads an `application.properties` document (`key=value`, `key: value` or `key value`
    /// lines; `#` and `!` start comments; `\` continues a line), named `properties text` in
    /// errors.
    pub fn from_properties_str(text: &str) -> Result<Self, Error> {
        Ok(Config::from_properties_str(text, "properties text")?.into())
    }

    /// Reads a file: YAML for `.yml`/`.yaml`, properties otherwise.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        Ok(Config::from_file(path)?.into())
    }

    /// Sets one property (overriding an earlier value).
    #[must_use]
    pub fn set(self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.set(key, value).into()
    }

    /// Adds the process environment over the properties so far.
    #[must_use]
    pub fn merge_env(self) -> Self {
        self.config.with_env().into()
    }

    /// Like [`SpringConfig::merge_env`], from the given variables.
    #[must_use]
    pub fn merge_env_vars<I: IntoIterator<Item = (String, String)>>(self, vars: I) -> Self {
        self.config.with_env_vars(vars).into()
    }

    /// The value of a property (relaxed name comparison, placeholders resolved); `None` when
    /// it is not set or a placeholder in it has no value.
    pub fn get(&self, key: &str) -> Option<String> {
        self.config.get(key).ok().flatten().map(|p| p.as_str())
    }

    /// Builds a client builder from these properties
    /// (`EurekaClientBuilder::default().config(..)`, see [`EurekaClientBuilder::config`]); an
    /// unknown `eureka.` key or a value that does not parse is an error naming the key and its
    /// file.
    pub fn builder(&self) -> Result<EurekaClientBuilder, Error> {
        EurekaClientBuilder::default().config(&self.config)
    }
}

impl EurekaClientBuilder {
    /// Applies the Spring properties of the [module table](crate::config) (`eureka.client.*`,
    /// `eureka.instance.*`, `spring.application.name`, `server.port`). Values from `config`
    /// override what was set on the builder before the call (service URLs in `config` replace
    /// the builder's; `eureka.client.register-with-eureka: false` removes its instance);
    /// setters called after it override `config`.
    ///
    /// An unknown `eureka.` key (its error names the nearest known key) or a value that does
    /// not parse is an error naming the key and its file; Spring keys the client accepts and
    /// ignores (the registry's `eureka.server.*` among them) are logged once at `WARN`, naming
    /// them; keys outside `eureka.` are not read.
    ///
    /// ```
    /// use feign_config::Config;
    /// use feign_eureka::EurekaClient;
    ///
    /// let yaml = "spring.application.name: orders\neureka.client.service-url.defaultZone: http://127.0.0.1:8761/eureka/\n";
    /// let config = Config::from_yaml_str(yaml, "application.yml")?;
    /// let builder = EurekaClient::builder().config(&config)?;
    /// # let _ = builder;
    /// let typo = Config::from_yaml_str("eureka.client.registry-fetch-interval: 5", "application.yml")?;
    /// let err = EurekaClient::builder().config(&typo).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid configuration key `eureka.client.registry-fetch-interval` in application.yml: \
    ///      unknown property, did you mean `eureka.client.registry-fetch-interval-seconds`?"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// It returns the error [`start`](EurekaClientBuilder::start) does, so a builder chain has
    /// one `?`: [`Error::Config`] names the key, [`Error::ConfigFile`] keeps the
    /// [`ConfigError`] as its source.
    pub fn config(self, config: &Config) -> Result<Self, Error> {
        self.apply_config(config).map_err(Error::from)
    }

    fn apply_config(self, config: &Config) -> Result<Self, ConfigError> {
        KEYS.check(config)?;
        let mut builder = self;
        let mut replaced_urls = false;
        let mut instance = InstanceSettings::default();
        let mut register: Option<(bool, Property)> = None;
        let mut tls_properties = Vec::new();
        let mut proxy_properties = Vec::new();
        if let Some(name) = config.get("spring.application.name")? {
            instance.app_name = Some(name.as_str());
        }
        if let Some(port) = config.get("server.port")? {
            instance.server_port = Some(port.as_number::<u16>()?);
        }
        for property in config.section("eureka")? {
            let lower = property.name().to_owned();
            let value = property.as_str();
            let secs = |p: &Property| p.as_duration(DurationUnit::Seconds);
            if lower.starts_with("eureka.client.serviceurl.") {
                let zone = property.rest_as_written(2);
                let urls = property.as_list();
                if urls.is_empty() {
                    return Err(property.error("no url"));
                }
                if !replaced_urls {
                    builder.service_urls.clear();
                    replaced_urls = true;
                }
                builder = builder.zone_service_urls(&zone, urls);
                continue;
            }
            if lower.starts_with("eureka.client.availabilityzones.") {
                if let Some(first) = property.as_list().into_iter().next() {
                    instance.availability_zone = Some(first);
                }
                continue;
            }
            if lower.starts_with("eureka.client.proxy") {
                proxy_properties.push(property);
                continue;
            }
            if lower.starts_with("eureka.client.tls.") {
                tls_properties.push(property);
                continue;
            }
            if lower.starts_with("eureka.instance.metadatamap.") {
                instance.metadata.insert(property.rest_as_written(2), value);
                continue;
            }
            match lower.as_str() {
                "eureka.client.enabled" => builder = builder.enabled(property.as_bool()?),
                "eureka.client.registerwitheureka" => {
                    register = Some((property.as_bool()?, property.clone()));
                }
                "eureka.client.fetchregistry" => {
                    builder = builder.fetch_registry(property.as_bool()?);
                }
                "eureka.client.registryfetchintervalseconds" => {
                    builder = builder.registry_fetch_interval(secs(&property)?);
                }
                "eureka.client.disabledelta" => {
                    builder = builder.disable_delta(property.as_bool()?);
                }
                "eureka.client.filteronlyupinstances" => {
                    builder = builder.filter_only_up_instances(property.as_bool()?);
                }
                "eureka.client.eurekaserverconnecttimeoutseconds" => {
                    builder = builder.connect_timeout(secs(&property)?);
                }
                "eureka.client.eurekaserverreadtimeoutseconds" => {
                    builder = builder.read_timeout(secs(&property)?);
                }
                "eureka.client.eurekaconnectionidletimeoutseconds" => {
                    let idle = secs(&property)?;
                    builder.http = std::mem::take(&mut builder.http).pool_idle_timeout(idle);
                }
                "eureka.client.transport.sessionedclientreconnectintervalseconds" => {
                    builder = builder
                        .session_duration(property.as_positive_duration(DurationUnit::Seconds)?);
                }
                "eureka.client.heartbeatexecutorexponentialbackoffbound"
                | "eureka.client.cacherefreshexecutorexponentialbackoffbound" => {
                    builder = builder.backoff_bound(property.as_number::<u32>()?);
                }
                "eureka.client.shouldenforcefetchregistryatinit" => {
                    builder = builder.enforce_fetch_at_init(property.as_bool()?);
                }
                "eureka.client.healthcheck.enabled" => {
                    builder.health_check_enabled = Some(property.as_bool()?);
                }
                "eureka.client.ondemandupdatestatuschange" => {
                    builder = builder.on_demand_update_status_change(property.as_bool()?);
                }
                "eureka.client.instanceinforeplicationintervalseconds" => {
                    builder = builder.instance_info_replication_interval(secs(&property)?);
                }
                "eureka.client.registryrefreshsinglevipaddress"
                | "eureka.client.registryfetchsinglevipaddress" => {
                    builder = builder.registry_fetch_single_vip_address(value);
                }
                "eureka.client.watchenabled" => builder = builder.watch(property.as_bool()?),
                "eureka.client.watchtimeoutseconds" => {
                    builder = builder.watch_timeout(secs(&property)?);
                }
                "eureka.client.prefersameeureka" | "eureka.client.prefersamezoneeureka" => {
                    property.as_bool()?;
                }
                "eureka.client.region" => {}
                "eureka.instance.appname" => instance.app_name = Some(value),
                "eureka.instance.appgroupname" => instance.app_group_name = Some(value),
                "eureka.instance.nonsecureport" => instance.port = Some(property.as_number()?),
                "eureka.instance.nonsecureportenabled" => {
                    instance.port_enabled = Some(property.as_bool()?);
                }
                "eureka.instance.secureport" => instance.secure_port = Some(property.as_number()?),
                "eureka.instance.secureportenabled" => {
                    instance.secure_port_enabled = Some(property.as_bool()?);
                }
                "eureka.instance.hostname" => instance.host_name = Some(value),
                "eureka.instance.ipaddress" => instance.ip_address = Some(value),
                "eureka.instance.preferipaddress" => instance.prefer_ip = Some(property.as_bool()?),
                "eureka.instance.instanceid" => instance.instance_id = Some(value),
                "eureka.instance.leaserenewalintervalinseconds" => {
                    instance.renewal = Some(secs(&property)?);
                }
                "eureka.instance.leaseexpirationdurationinseconds" => {
                    instance.expiration = Some(secs(&property)?);
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
                            .map_err(|e| property.error(e.to_string()))?,
                    );
                }
                _ => KEYS.unbound(&property)?,
            }
        }
        if let Some(tls) = tls::tls(config, &tls_properties)? {
            builder = builder.tls(tls);
        }
        if let Some(proxy) = tls::proxy(&proxy_properties)? {
            builder = builder.proxy(proxy);
        }
        if let Some(zone) = &instance.availability_zone {
            builder = builder.preferred_zone(zone.clone());
        }
        match (register, instance.app_name.clone()) {
            (Some((false, _)), _) => builder.instance = None,
            (_, Some(name)) => builder = builder.instance(instance.into_config(&name)),
            (Some((true, property)), None) => {
                return Err(property.error(
                    "registration needs spring.application.name or eureka.instance.appname",
                ));
            }
            (None, None) => {}
        }
        Ok(builder)
    }
}

#[derive(Default)]
struct InstanceSettings {
    app_name: Option<String>,
    app_group_name: Option<String>,
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
        let optional: [(Option<String>, Setter); 11] = [
            (self.app_group_name, |c, v| c.app_group_name(v)),
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
