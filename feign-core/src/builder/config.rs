//! [`Builder::config`]: OpenFeign's Spring properties onto the builder (feature `config`).

mod hedging;
mod keys;

use feign_config::{relaxed, Config, ConfigError, DurationUnit, Property};

use super::Builder;
use crate::options::LogLevel;
use crate::Error;
use crate::Retryer;

pub(super) use keys::KEYS;

/// The property prefixes read, older first so that the Spring Cloud 4 names win.
const PREFIXES: [&str; 2] = ["feign.client", "spring.cloud.openfeign.client"];

/// Header or query values of one client, merged over the `default` section by name.
#[derive(Default)]
struct Pairs(Vec<(String, Vec<String>)>);

impl Pairs {
    fn set(&mut self, name: String, values: Vec<String>, case_insensitive: bool) {
        let same = |n: &String| {
            if case_insensitive {
                n.eq_ignore_ascii_case(&name)
            } else {
                *n == name
            }
        };
        match self.0.iter_mut().find(|(n, _)| same(n)) {
            Some((_, old)) => *old = values,
            None => self.0.push((name, values)),
        }
    }
}

impl<C> Builder<C> {
    /// Applies OpenFeign's Spring properties for this client: first
    /// `spring.cloud.openfeign.client.config.default.*`, then
    /// `spring.cloud.openfeign.client.config.<service>.*` (the service name the client was
    /// declared with, relaxed); the older `feign.client.config.*` names are read too, and lose
    /// to the newer ones. Values from `config` override what was set on the builder before the
    /// call; setters called after it override `config`.
    ///
    /// The keys and the setters they drive are listed in the crate docs'
    /// [Configuration](crate#configuration) table.
    ///
    /// The sections of other clients are checked as well (not applied), so a mistake in any of
    /// them is reported by the first client configured.
    ///
    /// The circuit breaker, the bulkhead and the time limit come from
    /// `spring.cloud.openfeign.circuitbreaker.enabled` and Resilience4j's
    /// `resilience4j.circuitbreaker.*` / `resilience4j.bulkhead.*` / `resilience4j.timelimiter.*`,
    /// whose `instances.<name>` is the service name (see the crate docs'
    /// [Circuit breaker and bulkhead](crate#circuit-breaker-and-bulkhead-properties) table).
    ///
    /// `spring.cloud.openfeign.client.default-config` names the default section (default
    /// `default`). Every key under `spring.cloud.openfeign`, `feign` and `resilience4j` is
    /// checked first: Spring keys feign-rs accepts and ignores (`decode-slash`,
    /// `lazy-attributes-resolution`, Resilience4j's `register-health-indicator`, …) are logged
    /// once at `WARN`, naming the key; properties that name Java classes (`error-decoder`,
    /// `encoder`, `request-interceptors`, …) and `oauth2.enabled: true` are errors saying why;
    /// any other key is an error naming the nearest known key. A value that does not parse is
    /// an error naming the key and its file.
    ///
    /// ```
    /// use feign_core::config::Config;
    /// use feign_core::{feign_client, Error};
    ///
    /// #[feign_client("orders")]
    /// pub trait Orders {
    ///     #[get("/orders")]
    ///     async fn list(&self) -> Result<String, Error>;
    /// }
    ///
    /// let yaml = "spring.cloud.openfeign.client.config:\n  default:\n    read-timeout: 2000\n  orders:\n    url: http://127.0.0.1:8080\n    logger-level: BASIC\n";
    /// let config = Config::from_yaml_str(yaml, "application.yml")?;
    /// let orders = OrdersClient::builder().config(&config)?.build()?;
    /// # let _ = orders;
    ///
    /// let typo = Config::from_yaml_str("feign.client.config.orders.read-timout: 5", "application.yml")?;
    /// let err = OrdersClient::builder().config(&typo).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "`feign.client.config.orders.read-timout` in application.yml: unknown property, did you mean `feign.client.config.orders.read-timeout`?"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// A property it cannot bind is an [`Error`] for which [`Error::is_config`] is true, its
    /// source the `ConfigError`, so `builder().config(&c)?.build()?` needs one error type.
    pub fn config(self, config: &Config) -> Result<Self, Error> {
        self.bind_config(config).map_err(Error::from)
    }

    /// [`Builder::config`], with feign-config's error.
    fn bind_config(mut self, config: &Config) -> Result<Self, ConfigError> {
        KEYS.check(config)?;
        let mut default_name = "default".to_owned();
        for prefix in PREFIXES {
            for property in config.section(prefix)? {
                match property.rest().as_str() {
                    "defaultconfig" => default_name = property.as_non_empty()?,
                    // Read by `Builder::live_config` (`builder/live.rs`).
                    "refreshenabled" => {
                        property.as_bool()?;
                    }
                    rest if rest.starts_with("config.") && rest.matches('.').count() >= 2 => {}
                    _ => KEYS.unbound(&property)?,
                }
            }
        }
        self = self.bind_httpclient(config)?;
        let mut headers = Pairs::default();
        let mut query = Pairs::default();
        for section in [default_name.as_str(), self.meta.service] {
            for prefix in PREFIXES {
                let properties = config.section(&format!("{prefix}.config.{section}"))?;
                for property in &properties {
                    self = self.apply(property, &mut headers, &mut query)?;
                }
            }
        }
        // Other clients' sections are checked too, so a mistake there is reported now and
        // not when (or if) that client is built.
        for prefix in PREFIXES {
            let sections = format!("{prefix}.config");
            for name in config.section_names(&sections) {
                if name == relaxed(&default_name) || name == relaxed(self.meta.service) {
                    continue;
                }
                let mut scratch = Builder::<C>::new(self.meta);
                let (mut headers, mut query) = (Pairs::default(), Pairs::default());
                for property in config.section(&format!("{sections}.{name}"))? {
                    scratch = scratch.apply(&property, &mut headers, &mut query)?;
                }
            }
        }
        for (name, values) in headers.0 {
            self.default_headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
            self.default_headers
                .extend(values.into_iter().map(|v| (name.clone(), v)));
        }
        for (name, values) in query.0 {
            self.default_query.retain(|(n, _)| *n != name);
            self.default_query
                .extend(values.into_iter().map(|v| (name.clone(), v)));
        }
        self.bind_ssl_bundles(config, &default_name)?
            .bind_resilience(config)?
            .bind_hedging(config, &default_name)?
            .bind_compression(config)
    }

    /// One property of a client section.
    fn apply(
        mut self,
        property: &Property,
        headers: &mut Pairs,
        query: &mut Pairs,
    ) -> Result<Self, ConfigError> {
        let rest = property.rest();
        match rest.as_str() {
            "connecttimeout" => {
                let timeout = property.as_positive_duration(DurationUnit::Millis)?;
                self.options = self.options.connect_timeout(timeout);
            }
            "readtimeout" => {
                let timeout = property.as_positive_duration(DurationUnit::Millis)?;
                self.options = self.options.read_timeout(timeout);
            }
            "followredirects" => {
                self.options = self.options.follow_redirects(property.as_bool()?);
            }
            "loggerlevel" => {
                self.log_level = property.as_choice(&[
                    ("NONE", LogLevel::None),
                    ("BASIC", LogLevel::Basic),
                    ("HEADERS", LogLevel::Headers),
                    ("FULL", LogLevel::Full),
                ])?;
            }
            "dismiss404" => self.dismiss_404 = property.as_bool()?,
            // Applied by `bind_ssl_bundles`, which can look the bundle up.
            "sslbundle" => {
                property.as_non_empty()?;
            }
            "url" => self.url = Some(property.as_non_empty()?),
            "retryer" => {
                let retryer = property.as_choice(&[
                    ("feign.Retryer.Default", Retryer::default()),
                    ("feign.Retryer$Default", Retryer::default()),
                    ("feign.Retryer.NEVER_RETRY", Retryer::never()),
                ])?;
                self = self.retryer(retryer);
            }
            // Checked here in every client's section; applied by `bind_hedging`.
            rest if rest.starts_with("hedging.") => {
                hedging::parse(property)?;
            }
            _ => {
                if let Some(name) = map_key(property, "defaultrequestheaders")? {
                    headers.set(name, property.as_list(), true);
                } else if let Some(name) = map_key(property, "defaultqueryparameters")? {
                    query.set(name, property.as_list(), false);
                } else {
                    KEYS.unbound(property)?;
                }
            }
        }
        Ok(self)
    }
}

/// The map key (as written) of a `<section>.<client>.<map>.<key>` property, if it is in `map`.
fn map_key(property: &Property, map: &str) -> Result<Option<String>, ConfigError> {
    let rest = property.rest();
    let Some(tail) = rest.strip_prefix(map) else {
        return Ok(None);
    };
    if tail.is_empty() {
        return Err(property.error("expected a map of names to values"));
    }
    if !tail.starts_with('.') {
        return Ok(None);
    }
    Ok(Some(property.rest_as_written(1)))
}
