//! The circuit breaker, bulkhead and time limit part of [`Builder::config`]: Spring Cloud
//! OpenFeign's `spring.cloud.openfeign.circuitbreaker.*` switch and Resilience4j's Spring Boot
//! properties `resilience4j.circuitbreaker.*`, `resilience4j.bulkhead.*` (whose `adaptive.*`
//! settings, feign-rs's own, configure the adaptive concurrency limit) and
//! `resilience4j.timelimiter.*` (the call's total timeout).
//!
//! Resilience4j's `<name>` is the client's service name (relaxed). `configs.default` applies to
//! every client; `configs.<service>` over it, where Spring Cloud OpenFeign with
//! `circuitbreaker.group.enabled` finds a client's settings (its group config); then
//! `instances.<service>`, the per-instance form Resilience4j setups often use. The sections of
//! other names (a method's breaker name among them) are checked, not applied.

use std::time::Duration;

use feign_config::{relaxed, Config, ConfigError, DurationUnit, Property};

use super::config::KEYS;
use super::Builder;
use crate::resilience::AdaptiveLimitConfig;
use crate::{BulkheadConfig, CircuitBreakerConfig};

/// The switch's prefixes, older first so that the Spring Cloud 4 names win.
const SWITCH_PREFIXES: [&str; 2] = [
    "feign.circuitbreaker",
    "spring.cloud.openfeign.circuitbreaker",
];

/// Resilience4j's circuit breaker properties.
const BREAKER: &str = "resilience4j.circuitbreaker";

/// Resilience4j's (semaphore) bulkhead properties.
const BULKHEAD: &str = "resilience4j.bulkhead";

/// Resilience4j's time limiter properties.
const TIME_LIMITER: &str = "resilience4j.timelimiter";

impl<C> Builder<C> {
    /// Binds the circuit breaker switch, then Resilience4j's breaker, bulkhead and time limiter
    /// settings.
    pub(super) fn bind_resilience(mut self, config: &Config) -> Result<Self, ConfigError> {
        let mut enabled = None;
        for prefix in SWITCH_PREFIXES {
            for property in config.section(prefix)? {
                match property.rest().as_str() {
                    "enabled" => enabled = Some(property.as_bool()?),
                    // Spring keeps a breaker per method with group.enabled and only looks their
                    // settings up under the client name, as `configs.<service>` is read here
                    // either way.
                    "group.enabled" => {
                        property.as_bool()?;
                    }
                    _ => KEYS.unbound(&property)?,
                }
            }
        }
        match enabled {
            Some(true) if self.resilience.circuit_breaker.is_none() => {
                self.resilience.circuit_breaker = Some(CircuitBreakerConfig::default());
            }
            Some(false) => self.resilience.circuit_breaker = None,
            _ => {}
        }

        let service = relaxed(self.meta.service);
        let breaker = Sections::read(config, BREAKER, &service)?;
        for property in breaker.others() {
            apply_breaker(&mut CircuitBreakerConfig::default(), property)?;
        }
        // Without a breaker the client's settings are only checked.
        let mut unused = CircuitBreakerConfig::default();
        let target = self
            .resilience
            .circuit_breaker
            .as_mut()
            .unwrap_or(&mut unused);
        for property in breaker.this_client() {
            apply_breaker(target, property)?;
        }

        // As in Spring, where the time limiter is part of the Resilience4j circuit breaker that
        // wraps the call: without a breaker the settings are only checked.
        let limiter = Sections::read(config, TIME_LIMITER, &service)?;
        for property in limiter.others() {
            time_limit(property)?;
        }
        let mut deadline = None;
        for property in limiter.this_client() {
            deadline = time_limit(property)?.or(deadline);
        }
        if let (Some(deadline), Some(_)) = (deadline, &self.resilience.circuit_breaker) {
            self.options = self.options.total_timeout(deadline);
        }

        let bulkhead = Sections::read(config, BULKHEAD, &service)?;
        for property in bulkhead.others() {
            match adaptive_setting(property) {
                Some(setting) => {
                    apply_adaptive(&mut AdaptiveLimitConfig::default(), property, &setting)?;
                }
                None => {
                    apply_bulkhead(&mut BulkheadConfig::default(), property)?;
                }
            }
        }
        let (adaptive, fixed): (Vec<&Property>, Vec<&Property>) = bulkhead
            .this_client()
            .partition(|property| adaptive_setting(property).is_some());
        // Settings for this client turn its bulkhead on, as they would create it in Spring;
        // keys accepted and ignored (`writable-stack-trace-enabled`) do not.
        let mut settings = self.resilience.bulkhead.unwrap_or_default();
        let mut set = false;
        for property in fixed {
            set |= apply_bulkhead(&mut settings, property)?;
        }
        if set {
            self.resilience.bulkhead = Some(settings);
        }
        // The adaptive limit has its own switch; without it its settings are only checked.
        let mut limit = self.resilience.adaptive.unwrap_or_default();
        let mut enabled = self.resilience.adaptive.is_some();
        for property in adaptive {
            let setting = adaptive_setting(property).unwrap_or_default();
            if setting == "enabled" {
                enabled = property.as_bool()?;
            } else {
                apply_adaptive(&mut limit, property, &setting)?;
            }
        }
        self.resilience.adaptive = enabled.then_some(limit);
        Ok(self)
    }
}

/// The properties of one Resilience4j module (`resilience4j.circuitbreaker` or
/// `resilience4j.bulkhead`), sorted by whom they configure.
struct Sections {
    /// `configs.default`, then `configs.<service>`, then `instances.<service>`.
    this_client: Vec<Property>,
    /// Every other `configs.<name>` and `instances.<name>`.
    others: Vec<Property>,
}

impl Sections {
    fn read(config: &Config, module: &str, service: &str) -> Result<Sections, ConfigError> {
        let mut default = Vec::new();
        let mut group = Vec::new();
        let mut instance = Vec::new();
        let mut others = Vec::new();
        for property in config.section(module)? {
            let rest = property.rest();
            let mut segments = rest.splitn(3, '.');
            match (segments.next(), segments.next(), segments.next()) {
                (Some("configs"), Some("default"), Some(_)) => default.push(property),
                (Some("configs"), Some(name), Some(_)) if name == service => group.push(property),
                (Some("instances"), Some(name), Some(_)) if name == service => {
                    instance.push(property);
                }
                (Some("configs" | "instances"), Some(_), Some(_)) => others.push(property),
                // The module's own keys (`circuit-breaker-aspect-order`).
                _ => KEYS.unbound(&property)?,
            }
        }
        default.extend(group);
        default.extend(instance);
        Ok(Sections {
            this_client: default,
            others,
        })
    }

    fn this_client(&self) -> impl Iterator<Item = &Property> {
        self.this_client.iter()
    }

    fn others(&self) -> impl Iterator<Item = &Property> {
        self.others.iter()
    }
}

/// The setting a property of `<module>.configs|instances.<name>.` names.
fn setting(property: &Property) -> String {
    property
        .rest()
        .splitn(3, '.')
        .nth(2)
        .unwrap_or_default()
        .to_owned()
}

/// One `resilience4j.circuitbreaker.{configs,instances}.<name>.*` property.
fn apply_breaker(
    target: &mut CircuitBreakerConfig,
    property: &Property,
) -> Result<(), ConfigError> {
    match setting(property).as_str() {
        "failureratethreshold" => target.failure_rate_threshold = percent(property)?,
        "slowcallratethreshold" => target.slow_call_rate_threshold = percent(property)?,
        "slowcalldurationthreshold" => {
            target.slow_call_duration_threshold =
                property.as_positive_duration(DurationUnit::Millis)?;
        }
        "slidingwindowsize" => target.sliding_window_size = calls(property)?,
        "minimumnumberofcalls" => target.minimum_number_of_calls = calls(property)?,
        "waitdurationinopenstate" => {
            target.wait_duration_in_open_state =
                property.as_positive_duration(DurationUnit::Millis)?;
        }
        "permittednumberofcallsinhalfopenstate" => {
            target.permitted_number_of_calls_in_half_open_state = calls(property)?;
        }
        "slidingwindowtype" => {
            let count_based =
                property.as_choice(&[("COUNT_BASED", true), ("TIME_BASED", false)])?;
            if !count_based {
                return Err(property.error(
                    "TIME_BASED is not supported: the window is always COUNT_BASED, the last `sliding-window-size` calls",
                ));
            }
        }
        "automatictransitionfromopentohalfopenenabled" => {
            if !property.as_bool()? {
                return Err(property.error(
                    "false is not supported: an open breaker always turns half-open by itself once its wait is over",
                ));
            }
        }
        "baseconfig" => base_config(property)?,
        _ => KEYS.unbound(property)?,
    }
    Ok(())
}

/// One `resilience4j.timelimiter.{configs,instances}.<name>.*` property: the time limit it
/// sets, if it sets one.
fn time_limit(property: &Property) -> Result<Option<Duration>, ConfigError> {
    match setting(property).as_str() {
        "timeoutduration" => {
            return Ok(Some(property.as_positive_duration(DurationUnit::Millis)?));
        }
        "baseconfig" => base_config(property)?,
        _ => KEYS.unbound(property)?,
    }
    Ok(None)
}

/// One `resilience4j.bulkhead.{configs,instances}.<name>.*` property; whether it is a setting
/// of the bulkhead (not a key accepted and ignored).
fn apply_bulkhead(target: &mut BulkheadConfig, property: &Property) -> Result<bool, ConfigError> {
    match setting(property).as_str() {
        "maxconcurrentcalls" => {
            let calls = calls(property)?;
            if calls as usize > tokio::sync::Semaphore::MAX_PERMITS {
                return Err(property.error("too large"));
            }
            target.max_concurrent_calls = calls;
        }
        "maxwaitduration" => {
            target.max_wait_duration = property.as_duration(DurationUnit::Millis)?;
        }
        "baseconfig" => base_config(property)?,
        _ => {
            KEYS.unbound(property)?;
            return Ok(false);
        }
    }
    Ok(true)
}

/// The setting after `adaptive.` of a `resilience4j.bulkhead.{configs,instances}.<name>.adaptive.*`
/// property.
fn adaptive_setting(property: &Property) -> Option<String> {
    setting(property)
        .strip_prefix("adaptive.")
        .map(str::to_owned)
}

/// One `resilience4j.bulkhead.{configs,instances}.<name>.adaptive.*` property but `enabled`.
fn apply_adaptive(
    target: &mut AdaptiveLimitConfig,
    property: &Property,
    setting: &str,
) -> Result<(), ConfigError> {
    match setting {
        "enabled" => {
            property.as_bool()?;
        }
        "initiallimit" => target.initial_limit = calls(property)?,
        "minlimit" => target.min_limit = calls(property)?,
        "maxlimit" => target.max_limit = calls(property)?,
        "samplewindow" => {
            target.sample_window = property.as_positive_duration(DurationUnit::Millis)?;
        }
        "minsamples" => target.min_samples = calls(property)?,
        "tolerance" => {
            let value = property.as_f64()?;
            if !(value >= 1.0 && value.is_finite()) {
                return Err(property.bad_value("expected a factor of at least 1"));
            }
            target.tolerance = value;
        }
        "smoothing" => {
            let value = property.as_f64()?;
            if !(value > 0.0 && value <= 1.0) {
                return Err(property.bad_value("expected a number over 0 and at most 1"));
            }
            target.smoothing = value;
        }
        "minrttrefresh" => {
            target.min_rtt_refresh = property.as_positive_duration(DurationUnit::Millis)?;
        }
        _ => return Err(property.unknown()),
    }
    Ok(())
}

/// `base-config`: every section already inherits `configs.default`, the only base supported.
fn base_config(property: &Property) -> Result<(), ConfigError> {
    if relaxed(&property.as_non_empty()?) != "default" {
        return Err(property.bad_value("only `default` is supported as a base config"));
    }
    Ok(())
}

/// A percentage over 0 and at most 100.
fn percent(property: &Property) -> Result<f32, ConfigError> {
    let value = property.as_f64()?;
    if value <= 0.0 || value > 100.0 {
        return Err(property.bad_value("expected a percentage over 0 and at most 100"));
    }
    // In (0, 100], so the narrowing loses nothing that matters.
    Ok(value as f32)
}

/// A number of calls, at least 1.
fn calls(property: &Property) -> Result<u32, ConfigError> {
    let value = property.as_number::<u32>()?;
    if value == 0 {
        return Err(property.error("must be at least 1"));
    }
    Ok(value)
}
