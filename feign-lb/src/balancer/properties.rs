//! [`Builder::config`]: Spring Cloud LoadBalancer's properties onto the balancer (feature
//! `config`).

mod keys;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use feign_config::{relaxed, Config, ConfigError, DurationUnit, Property};

use self::keys::KEYS;
use super::{Builder, ServiceConfig};
use crate::config::Policy;
use crate::filter::{Hints, StickySession, ZonePreference};
use crate::retry::{Backoff, RetryConfig};
use crate::{
    CachingSupplier, HealthCheckOptions, HealthCheckSupplier, InstanceSupplier, Subset,
    SubsetSupplier,
};

/// Spring's prefix.
const SPRING: &str = "spring.cloud.loadbalancer";
/// Ours, for what Spring chooses with beans rather than properties: the policy.
const OURS: &str = "feign.loadbalancer";

/// Maps in a section: `hint.<service>` and `health-check.path.<service>` (`default` for all).
const MAPS: [&str; 2] = ["hint", "healthcheck.path"];

/// The supplier layers a service's instances go through: Spring's caching and health checks.
#[derive(Clone, Default)]
pub(super) struct Layers {
    /// For the balancer's supplier.
    default: Layer,
    /// Services whose own settings differ, by name as written.
    services: Vec<(String, Layer)>,
}

#[derive(Clone, Default)]
struct Layer {
    cache_ttl: Option<Duration>,
    /// Health checks, when the `health-check` preset is on and the path is not empty.
    health: Option<HealthCheckOptions>,
    /// This client's subset, when the `subset` preset is on.
    subset: Option<Subset>,
}

/// The transport settings health checks connect with ([`Builder::health_check_transport`]).
type Transport = Option<(feign_core::transport::HttpClientConfig, feign_core::Options)>;

impl Layer {
    fn wrap(
        &self,
        source: Arc<dyn InstanceSupplier>,
        transport: &Transport,
    ) -> Arc<dyn InstanceSupplier> {
        // The subset first: health checks and the cache then see only its instances.
        let source = match &self.subset {
            Some(subset) => Arc::new(SubsetSupplier::shared(source, subset.clone())),
            None => source,
        };
        // Spring's health-check chain has no cache; the others cache.
        match (&self.health, self.cache_ttl) {
            (Some(options), _) => {
                let options = match transport {
                    Some((http, call)) => options.clone().transport(http.clone(), call),
                    None => options.clone(),
                };
                Arc::new(HealthCheckSupplier::with_options(source, options))
            }
            (None, Some(ttl)) => Arc::new(CachingSupplier::with_ttl(source, ttl)),
            (None, None) => source,
        }
    }
}

/// The properties of one section, by relaxed name after the section's prefix.
#[derive(Default)]
struct Section(BTreeMap<String, Property>);

impl Section {
    fn get(&self, key: &str) -> Option<&Property> {
        self.0.get(key)
    }

    /// `map.<service>`, else `map.default`.
    fn map(&self, map: &str, service: Option<&str>) -> Option<&Property> {
        service
            .and_then(|s| self.0.get(&format!("{map}.{}", relaxed(s))))
            .or_else(|| self.0.get(&format!("{map}.default")))
    }

    /// Whether any key starts with one of `prefixes`.
    fn touches(&self, prefixes: &[&str]) -> bool {
        self.0
            .keys()
            .any(|k| prefixes.iter().any(|p| k.starts_with(p)))
    }
}

/// A service's view: its own section first, then the top level.
struct Effective<'a> {
    sections: [&'a Section; 2],
    service: Option<&'a str>,
}

impl<'a> Effective<'a> {
    fn get(&self, key: &str) -> Option<&'a Property> {
        self.sections.iter().find_map(|s| s.get(key))
    }

    fn map(&self, map: &str) -> Option<&'a Property> {
        self.sections.iter().find_map(|s| s.map(map, self.service))
    }
}

/// Reads a section (its keys checked by [`KEYS`] before); `clients.<name>.*` keys of the top
/// level are collected by client name (as written).
fn read(
    config: &Config,
    prefix: &str,
    clients: Option<&mut BTreeMap<String, (String, Section)>>,
) -> Result<Section, ConfigError> {
    let mut section = Section::default();
    let mut client_sections = clients;
    for property in config.section(prefix)? {
        let rest = property.rest();
        if let Some(after) = rest.strip_prefix("clients.") {
            let (Some(sections), Some((name, key))) =
                (client_sections.as_deref_mut(), after.split_once('.'))
            else {
                return Err(property.unknown());
            };
            let written = property.rest_as_written(1);
            let written = written.split('.').next().unwrap_or(name).to_owned();
            sections
                .entry(name.to_owned())
                .or_insert_with(|| (written, Section::default()))
                .1
                 .0
                .insert(key.to_owned(), property);
            continue;
        }
        section.0.insert(rest, property);
    }
    Ok(section)
}

/// Per-client policies by relaxed name: the name as written and the property.
type ClientPolicies = BTreeMap<String, (String, Property)>;

/// Our policy section: only `policy`, top level or per client.
fn read_policies(config: &Config) -> Result<(Option<Property>, ClientPolicies), ConfigError> {
    let mut top = None;
    let mut clients = BTreeMap::new();
    for property in config.section(OURS)? {
        let rest = property.rest();
        if rest == "policy" {
            top = Some(property);
        } else if let Some(name) = rest
            .strip_prefix("clients.")
            .and_then(|r| r.strip_suffix(".policy"))
            .filter(|n| !n.is_empty() && !n.contains('.'))
        {
            let written = property.rest_as_written(1);
            let written = written.split('.').next().unwrap_or(name).to_owned();
            clients.insert(name.to_owned(), (written, property));
        } else {
            return Err(property.unknown());
        }
    }
    Ok((top, clients))
}

fn policy(property: &Property) -> Result<Policy, ConfigError> {
    property.as_choice(&[
        ("round-robin", Policy::RoundRobin),
        ("random", Policy::Random),
        ("weighted", Policy::Weighted),
        ("least-request", Policy::LeastRequest),
        ("peak-ewma", Policy::PeakEwma),
    ])
}

/// Spring's preset chains (`spring.cloud.loadbalancer.configurations`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Preset {
    Default,
    ZonePreference,
    HealthCheck,
    StickySession,
    SameInstance,
    Weighted,
    Subset,
}

/// The settings one service (or the balancer, `service == None`) gets from `view`.
///
/// `replace` holds the balancer's policy before configuration when the service names its own
/// preset: as in Spring, that preset replaces the top level's rather than adding to it.
fn bind(
    view: &Effective<'_>,
    base_retry: &RetryConfig,
    own_policy: Option<&Property>,
    replace: Option<Policy>,
) -> Result<(ServiceConfig, Layer), ConfigError> {
    let mut out = ServiceConfig::new();
    if let Some(policy) = replace {
        out = out
            .zone_preference(None)
            .sticky_session(None)
            .same_instance_preference(false)
            .policy(policy);
    }
    let mut layer = Layer::default();
    let configurations = view.get("configurations");
    let preset = match configurations {
        Some(p) => p.as_choice(&[
            ("default", Preset::Default),
            ("zone-preference", Preset::ZonePreference),
            ("health-check", Preset::HealthCheck),
            ("request-based-sticky-session", Preset::StickySession),
            ("same-instance-preference", Preset::SameInstance),
            ("weighted", Preset::Weighted),
            ("subset", Preset::Subset),
        ])?,
        None => Preset::Default,
    };
    if let (Preset::ZonePreference, Some(p)) = (preset, configurations) {
        let zone = view
            .get("zone")
            .ok_or_else(|| p.error("zone-preference needs spring.cloud.loadbalancer.zone"))?;
        out = out.zone_preference(ZonePreference::new(zone.as_non_empty()?));
    }
    match preset {
        Preset::Default | Preset::ZonePreference => {}
        Preset::HealthCheck => {
            let mut options = HealthCheckOptions::new();
            if let Some(p) = view.get("healthcheck.initialdelay") {
                options = options.initial_delay(p.as_duration(DurationUnit::Millis)?);
            }
            if let Some(p) = view.get("healthcheck.interval") {
                options = options.interval(p.as_positive_duration(DurationUnit::Millis)?);
            }
            if let Some(port) = health_check_port(view)? {
                options = options.port(port);
            }
            if let Some(every) = refetch_instances(view)? {
                options = options.refetch_instances(every);
            }
            match view.map("healthcheck.path") {
                Some(p) if p.as_str().trim().is_empty() => {}
                Some(p) => layer.health = Some(options.path(p.as_str().trim())),
                None => layer.health = Some(options),
            }
        }
        Preset::StickySession => {
            let mut sticky = StickySession::new();
            if let Some(p) = view.get("stickysession.instanceidcookiename") {
                sticky = sticky.cookie(p.as_non_empty()?);
            }
            out = out.sticky_session(sticky);
        }
        Preset::SameInstance => out = out.same_instance_preference(true),
        Preset::Weighted => out = out.policy(Policy::Weighted),
        Preset::Subset => layer.subset = Some(subset(view)?),
    }
    // Values are checked even where the preset does not use them.
    if preset != Preset::Subset
        && (view.get("subset.instanceid").is_some() || view.get("subset.size").is_some())
    {
        subset(view)?;
    }
    if let Some(p) = view.get("healthcheck.initialdelay") {
        p.as_duration(DurationUnit::Millis)?;
    }
    if let Some(p) = view.get("healthcheck.interval") {
        p.as_positive_duration(DurationUnit::Millis)?;
    }
    health_check_port(view)?;
    refetch_instances(view)?;
    if let Some(p) = view.get("stickysession.addserviceinstancecookie") {
        if p.as_bool()? {
            return Err(p.error("adding the instance cookie to requests is not supported"));
        }
    }
    if let Some(p) = own_policy {
        out = out.policy(policy(p)?);
    }
    let hint = view.map("hint");
    let header = view.get("hintheadername");
    if hint.is_some() || header.is_some() {
        let mut hints = Hints::new();
        if let Some(p) = header {
            let name = http::HeaderName::try_from(p.as_non_empty()?)
                .map_err(|_| p.bad_value("expected a header name"))?;
            hints = hints.header(name);
        }
        if let Some(p) = hint {
            hints = hints.default_hint(p.as_non_empty()?);
        }
        out = out.hints(hints);
    }
    if preset != Preset::HealthCheck {
        let enabled = match view.get("cache.enabled") {
            Some(p) => p.as_bool()?,
            None => true,
        };
        if let Some(p) = view.get("cache.ttl") {
            let ttl = p.as_positive_duration(DurationUnit::Millis)?;
            if enabled {
                layer.cache_ttl = Some(ttl);
            }
        }
    }
    if let Some(p) = view.get("cache.capacity") {
        p.as_number::<u32>()?;
    }
    if let Some(retry) = bind_retry(view, base_retry)? {
        out = out.retry(retry);
    }
    Ok((out, layer))
}

/// `subset.instance-id` and `subset.size` (default 100). Without an id, a random one: each
/// process then gets a subset of its own, as with Spring's generated default, though not the
/// same one after a restart.
fn subset(view: &Effective<'_>) -> Result<Subset, ConfigError> {
    let id = match view.get("subset.instanceid") {
        Some(p) => p.as_non_empty()?,
        None => format!("{:016x}", rand::random::<u64>()),
    };
    let mut subset = Subset::new(id);
    if let Some(p) = view.get("subset.size") {
        let size = p.as_number::<usize>()?;
        if size == 0 {
            return Err(p.bad_value("expected a subset size of at least 1"));
        }
        subset = subset.size(size);
    }
    Ok(subset)
}

/// `health-check.port`, a port from 1 to 65535.
fn health_check_port(view: &Effective<'_>) -> Result<Option<u16>, ConfigError> {
    let Some(p) = view.get("healthcheck.port") else {
        return Ok(None);
    };
    match p.as_number::<u16>()? {
        0 => Err(p.bad_value("expected a port from 1 to 65535")),
        port => Ok(Some(port)),
    }
}

/// How often new instances are looked for when `health-check.refetch-instances` is true:
/// `refetch-instances-interval`, Spring's 25 s by default.
fn refetch_instances(view: &Effective<'_>) -> Result<Option<Duration>, ConfigError> {
    let every = match view.get("healthcheck.refetchinstancesinterval") {
        Some(p) => p.as_positive_duration(DurationUnit::Millis)?,
        None => Duration::from_secs(25),
    };
    match view.get("healthcheck.refetchinstances") {
        Some(p) if p.as_bool()? => Ok(Some(every)),
        _ => Ok(None),
    }
}

/// `retry.*` over `base`, or `None` when no retry key is set.
fn bind_retry(
    view: &Effective<'_>,
    base: &RetryConfig,
) -> Result<Option<RetryConfig>, ConfigError> {
    let touched = view.sections.iter().any(|s| s.touches(&["retry."]));
    if !touched {
        return Ok(None);
    }
    let mut retry = base.clone();
    if let Some(p) = view.get("retry.enabled") {
        retry.enabled = p.as_bool()?;
    }
    if let Some(p) = view.get("retry.maxretriesonsameserviceinstance") {
        retry = retry.max_retries_on_same_instance(p.as_number()?);
    }
    if let Some(p) = view.get("retry.maxretriesonnextserviceinstance") {
        retry = retry.max_retries_on_next_instance(p.as_number()?);
    }
    if let Some(p) = view.get("retry.retryonalloperations") {
        retry = retry.retry_on_all_operations(p.as_bool()?);
    }
    if let Some(p) = view.get("retry.retryablestatuscodes") {
        let codes = p
            .as_list()
            .iter()
            .map(|c| c.parse::<u16>().ok().filter(|c| (100..=599).contains(c)))
            .collect::<Option<Vec<u16>>>()
            .ok_or_else(|| p.bad_value("expected a list of HTTP status codes"))?;
        retry = retry.retryable_status_codes(codes);
    }
    if let Some(p) = view.get("retry.avoidpreviousinstance") {
        if !p.as_bool()? {
            return Err(p.error("retries always avoid the instances already tried"));
        }
    }
    let backoff_on = match view.get("retry.backoff.enabled") {
        Some(p) => p.as_bool()?,
        None => false,
    };
    let min = match view.get("retry.backoff.minbackoff") {
        Some(p) => Some(p.as_duration(DurationUnit::Millis)?),
        None => None,
    };
    let max = match view.get("retry.backoff.maxbackoff") {
        Some(p) => Some(p.as_duration(DurationUnit::Millis)?),
        None => None,
    };
    let jitter = match view.get("retry.backoff.jitter") {
        Some(p) => {
            let j = p.as_f64()?;
            if !(0.0..=1.0).contains(&j) {
                return Err(p.bad_value("expected a number from 0 to 1"));
            }
            Some(j)
        }
        None => None,
    };
    if backoff_on {
        let defaults = Backoff::default();
        let mut backoff =
            Backoff::exponential(min.unwrap_or(defaults.min), max.unwrap_or(defaults.max));
        if let Some(j) = jitter {
            backoff = backoff.jitter(j);
        }
        retry = retry.backoff(backoff);
    } else if view.get("retry.backoff.enabled").is_some() {
        retry = retry.backoff(Backoff::none());
    }
    Ok(Some(retry))
}

/// Copies every setting `top` has over `base`.
fn overlay(base: &mut ServiceConfig, top: ServiceConfig) {
    let ServiceConfig {
        supplier,
        policy,
        retry,
        zone,
        hints,
        canary,
        version,
        sticky,
        same_instance,
        ejection,
        slow_start,
        peak_ewma,
        panic_threshold,
    } = top;
    base.supplier = supplier.or(base.supplier.take());
    base.policy = policy.or(base.policy);
    base.retry = retry.or(base.retry.take());
    base.zone = zone.or(base.zone.take());
    base.hints = hints.or(base.hints.take());
    base.canary = canary.or(base.canary.take());
    base.version = version.or(base.version.take());
    base.sticky = sticky.or(base.sticky.take());
    base.same_instance = same_instance.or(base.same_instance);
    base.ejection = ejection.or(base.ejection.take());
    base.slow_start = slow_start.or(base.slow_start.take());
    base.peak_ewma = peak_ewma.or(base.peak_ewma.take());
    base.panic_threshold = panic_threshold.or(base.panic_threshold);
}

impl Builder {
    /// Applies Spring Cloud LoadBalancer's properties: `spring.cloud.loadbalancer.*` for every
    /// service, then `spring.cloud.loadbalancer.clients.<service>.*` for one (each key
    /// inheriting the top level's). Values from `config` override what was set on the builder
    /// before the call; setters called after it override `config`.
    ///
    /// The keys and their effects are listed in the crate docs'
    /// [Configuration](crate#configuration) table.
    ///
    /// Every key under these prefixes is checked first: a Spring key feign-lb accepts and
    /// ignores (`enabled: false`, `health-check.repeat-health-check`, `x-forwarded.enabled`,
    /// `eager-load.clients`, …; the list is `balancer/properties/keys.rs`) is logged once at
    /// `WARN` naming it; any other key that is not in the table is an error naming the nearest
    /// known key. That, or a value that does not parse, is an error naming the key and its
    /// file: a [`feign_core::Error`] for which
    /// [`is_config`](feign_core::Error::is_config) is true, its source the `ConfigError`, so a
    /// balancer and its clients are configured with one error type.
    ///
    /// ```
    /// use feign_config::Config;
    /// use feign_lb::LoadBalancer;
    ///
    /// let yaml = "spring.cloud.loadbalancer:\n  retry:\n    max-retries-on-next-service-instance: 2\n  clients:\n    orders:\n      configurations: weighted\n";
    /// let config = Config::from_yaml_str(yaml, "application.yml")?;
    /// let lb = LoadBalancer::builder()
    ///     .static_lists([("orders", vec!["http://127.0.0.1:8081"])])
    ///     .config(&config)?
    ///     .build();
    /// # let _ = lb;
    /// let typo = Config::from_yaml_str("spring.cloud.loadbalancer.retry.max-retries: 2", "application.yml")?;
    /// let err = LoadBalancer::builder().config(&typo).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "`spring.cloud.loadbalancer.retry.max-retries` in application.yml: unknown property, \
    ///      did you mean `spring.cloud.loadbalancer.retry.max-retries-on-same-service-instance`?"
    /// );
    /// assert!(err.is_config());
    /// # Ok::<(), feign_core::Error>(())
    /// ```
    pub fn config(self, config: &Config) -> Result<Self, feign_core::Error> {
        self.bind_config(config).map_err(feign_core::Error::from)
    }

    /// [`Builder::config`], with feign-config's error.
    fn bind_config(mut self, config: &Config) -> Result<Self, ConfigError> {
        KEYS.check(config)?;
        let mut clients = BTreeMap::new();
        let top = read(config, SPRING, Some(&mut clients))?;
        let (top_policy, client_policies) = read_policies(config)?;
        let empty = Section::default();
        let top_view = Effective {
            sections: [&top, &empty],
            service: None,
        };
        let current = self.settings();
        let base_policy = current.policy;
        let (defaults, layer) = bind(&top_view, &current.retry, top_policy.as_ref(), None)?;
        overlay(&mut self.defaults, defaults);
        let base_retry = self.settings().retry;
        self.layers.default = layer;

        // Services with settings of their own: a clients section, a policy, or a map entry.
        let mut names: BTreeMap<String, String> = clients
            .iter()
            .map(|(name, (written, _))| (name.clone(), written.clone()))
            .collect();
        for (name, (written, _)) in &client_policies {
            names.entry(name.clone()).or_insert_with(|| written.clone());
        }
        for (key, property) in &top.0 {
            for map in MAPS {
                if let Some(name) = key.strip_prefix(map).and_then(|k| k.strip_prefix('.')) {
                    if name != "default" {
                        let written = property.rest_as_written(map.matches('.').count() + 1);
                        names.entry(name.to_owned()).or_insert(written);
                    }
                }
            }
        }
        for (name, written) in names {
            let own = clients.get(&name).map_or(&empty, |(_, s)| s);
            let view = Effective {
                sections: [own, &top],
                service: Some(&written),
            };
            let policy = client_policies
                .get(&name)
                .map(|(_, p)| p)
                .or(top_policy.as_ref());
            let replace = own.get("configurations").map(|_| base_policy);
            let (service, layer) = bind(&view, &base_retry, policy, replace)?;
            let own_layer = own.touches(&["configurations", "healthcheck.", "cache.", "subset."])
                || top.get(&format!("healthcheck.path.{name}")).is_some();
            if own_layer {
                self.layers.services.retain(|(n, _)| relaxed(n) != name);
                self.layers.services.push((written.clone(), layer));
            }
            match self.overrides.iter_mut().find(|(n, _)| relaxed(n) == name) {
                Some((_, existing)) => overlay(existing, service),
                None => self.overrides.push((written, service)),
            }
        }
        Ok(self)
    }
}

/// Wraps the balancer's supplier, and each service's with layers of its own, as configured.
pub(super) fn wrap_suppliers(builder: &mut Builder) {
    let layers = std::mem::take(&mut builder.layers);
    let raw = builder.defaults.supplier.clone();
    let transport = &builder.health_check_transport;
    if let Some(supplier) = &raw {
        builder.defaults.supplier = Some(layers.default.wrap(supplier.clone(), transport));
    }
    for (name, layer) in layers.services {
        let index = match builder
            .overrides
            .iter()
            .position(|(n, _)| relaxed(n) == relaxed(&name))
        {
            Some(index) => index,
            None => {
                builder.overrides.push((name, ServiceConfig::new()));
                builder.overrides.len() - 1
            }
        };
        let config = &mut builder.overrides[index].1;
        if let Some(source) = config.supplier.clone().or_else(|| raw.clone()) {
            config.supplier = Some(layer.wrap(source, transport));
        }
    }
}
