//! The transport's part of [`Builder::config`]: Spring Cloud OpenFeign's
//! `spring.cloud.openfeign.httpclient.*` (and the older `feign.httpclient.*`) for every client,
//! and a client's `ssl-bundle`, a Spring Boot PEM SSL bundle (feature `config`).

use std::time::Duration;

use feign_config::{relaxed, Config, ConfigError, DurationUnit, Property};

use super::config::KEYS;
use super::Builder;
use crate::transport::{HttpProtocol, Tls};

/// The shared HTTP client's prefixes, older first so that the Spring Cloud 4 names win.
const HTTPCLIENT: [&str; 2] = ["feign.httpclient", "spring.cloud.openfeign.httpclient"];

/// The per-client prefixes (as in `config.rs`).
const CLIENTS: [&str; 2] = ["feign.client", "spring.cloud.openfeign.client"];

/// A number and its Java `TimeUnit`, set by two properties.
#[derive(Default)]
struct Timed {
    amount: Option<(u64, Property)>,
    unit: Option<Duration>,
}

impl Timed {
    /// The duration, if the amount was set (the unit defaults to `default_unit`).
    fn get(&self, default_unit: Duration) -> Option<(Duration, &Property)> {
        let (amount, property) = self.amount.as_ref()?;
        let unit = self.unit.unwrap_or(default_unit);
        Some((
            unit.saturating_mul(u32::try_from(*amount).unwrap_or(u32::MAX)),
            property,
        ))
    }
}

fn time_unit(property: &Property) -> Result<Duration, ConfigError> {
    property.as_choice(&[
        ("NANOSECONDS", Duration::from_nanos(1)),
        ("MICROSECONDS", Duration::from_micros(1)),
        ("MILLISECONDS", Duration::from_millis(1)),
        ("SECONDS", Duration::from_secs(1)),
        ("MINUTES", Duration::from_secs(60)),
        ("HOURS", Duration::from_secs(3600)),
        ("DAYS", Duration::from_secs(86400)),
    ])
}

impl<C> Builder<C> {
    /// `spring.cloud.openfeign.httpclient.*`, applied before the client sections so that a
    /// client's own `connect-timeout`, `read-timeout` and `follow-redirects` win.
    pub(super) fn bind_httpclient(mut self, config: &Config) -> Result<Self, ConfigError> {
        let (mut ttl, mut socket) = (Timed::default(), Timed::default());
        for prefix in HTTPCLIENT {
            for property in config.section(prefix)? {
                let rest = property.rest();
                match rest.as_str() {
                    // Which Java client Spring picks; the transport here is always reqwest.
                    "enabled" | "hc5.enabled" | "okhttp.enabled" | "http2.enabled" => {
                        property.as_bool()?;
                    }
                    "disablesslvalidation" => {
                        let off = property.as_bool()?;
                        let tls = self.http.tls_mut();
                        *tls = tls.clone().danger_accept_invalid_certs(off);
                    }
                    // Common in Spring configurations (its default is 200), so refusing it would
                    // stop a migrated application from starting; it is checked and named instead.
                    "maxconnections" => {
                        let max = property.as_number::<usize>()?;
                        property.warn(format_args!(
                            "{max} has no effect: the connection pool has no total cap; cap concurrent calls with a bulkhead (resilience4j.bulkhead.*)"
                        ));
                    }
                    "maxconnectionsperroute" => {
                        let max = property.as_number::<usize>()?;
                        self.http = std::mem::take(&mut self.http).pool_max_idle_per_host(max);
                    }
                    "timetolive" => ttl.amount = Some((property.as_number()?, property.clone())),
                    "timetoliveunit" => ttl.unit = Some(time_unit(&property)?),
                    "followredirects" => {
                        self.options = self.options.follow_redirects(property.as_bool()?);
                    }
                    "connectiontimeout" => {
                        let timeout = property.as_positive_duration(DurationUnit::Millis)?;
                        self.options = self.options.connect_timeout(timeout);
                    }
                    // Apache's idle-connection sweep and pool wait: hyper's pool needs neither.
                    "connectiontimerrepeat" | "hc5.connectionrequesttimeout" => {
                        property.as_number::<u64>()?;
                    }
                    "hc5.connectionrequesttimeoutunit" => {
                        time_unit(&property)?;
                    }
                    "hc5.poolconcurrencypolicy" => {
                        property.as_choice(&[("STRICT", ()), ("LAX", ())])?;
                    }
                    "hc5.poolreusepolicy" => {
                        property.as_choice(&[("FIFO", ()), ("LIFO", ())])?;
                    }
                    "hc5.sockettimeout" => {
                        socket.amount = Some((property.as_number()?, property.clone()));
                    }
                    "hc5.sockettimeoutunit" => socket.unit = Some(time_unit(&property)?),
                    "okhttp.readtimeout" => {
                        let timeout = property.as_positive_duration(DurationUnit::Millis)?;
                        self.options = self.options.read_timeout(timeout);
                    }
                    "okhttp.protocols" => {
                        let protocols = property.as_list();
                        let protocol =
                            match protocols.iter().map(|p| p.trim()).collect::<Vec<_>>()[..] {
                                ["H2_PRIOR_KNOWLEDGE"] => HttpProtocol::Http2PriorKnowledge,
                                ["HTTP_1_1"] => HttpProtocol::Http1Only,
                                ref list
                                    if list.iter().all(|p| matches!(*p, "HTTP_1_1" | "HTTP_2"))
                                        && !list.is_empty() =>
                                {
                                    HttpProtocol::Auto
                                }
                                _ => return Err(property.error(
                                    "expected H2_PRIOR_KNOWLEDGE alone, or HTTP_1_1 and/or HTTP_2",
                                )),
                            };
                        self.http = std::mem::take(&mut self.http).protocol(protocol);
                    }
                    "http2.version" => {
                        let protocol = property.as_choice(&[
                            ("HTTP_2", HttpProtocol::Auto),
                            ("HTTP_1_1", HttpProtocol::Http1Only),
                        ])?;
                        self.http = std::mem::take(&mut self.http).protocol(protocol);
                    }
                    "sslbundle" | "hc5.sslbundle" => {
                        self = self.bundle(Tls::from_ssl_bundle(config, &property)?);
                    }
                    _ => KEYS.unbound(&property)?,
                }
            }
        }
        if let Some((ttl, property)) = ttl.get(Duration::from_secs(1)) {
            if ttl.is_zero() {
                return Err(property.error("must be greater than zero"));
            }
            self.http = std::mem::take(&mut self.http).pool_idle_timeout(ttl);
        }
        if let Some((timeout, property)) = socket.get(Duration::from_secs(1)) {
            if timeout.is_zero() {
                return Err(property.error("must be greater than zero"));
            }
            self.options = self.options.read_timeout(timeout);
        }
        Ok(self)
    }

    /// Takes a bundle's TLS settings, keeping `disable-ssl-validation`.
    fn bundle(mut self, tls: Tls) -> Self {
        let tls = tls.danger_accept_invalid_certs(self.http.accepts_invalid_certs());
        self.http = std::mem::take(&mut self.http).tls(tls);
        self
    }

    /// Each client section's `ssl-bundle`: every one is checked, and the default section's,
    /// then this client's, applied (a later one replacing the TLS settings).
    pub(super) fn bind_ssl_bundles(
        mut self,
        config: &Config,
        default_name: &str,
    ) -> Result<Self, ConfigError> {
        for section in [default_name, self.meta.service] {
            for prefix in CLIENTS {
                let key = format!("{prefix}.config.{section}.ssl-bundle");
                if let Some(property) = config.get(&key)? {
                    self = self.bundle(Tls::from_ssl_bundle(config, &property)?);
                }
            }
        }
        for prefix in CLIENTS {
            let sections = format!("{prefix}.config");
            for name in config.section_names(&sections) {
                if name == relaxed(default_name) || name == relaxed(self.meta.service) {
                    continue;
                }
                if let Some(property) = config.get(&format!("{sections}.{name}.ssl-bundle"))? {
                    let _checked = Tls::from_ssl_bundle(config, &property)?;
                }
            }
        }
        Ok(self)
    }
}
