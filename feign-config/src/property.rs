//! One resolved property and its typed readers; every mistake names the key and its source.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::duration::{self, DurationUnit};
use crate::source::Value;
use crate::warned::Warned;
use crate::ConfigError;

/// How the origin of a property read from the environment begins; the variable's name follows.
pub(crate) const ENV_ORIGIN: &str = "environment variable ";

/// A property as a binder sees it: its name as written, where it came from, and its value
/// with placeholders resolved.
///
/// `Debug` shows the key and source, never the value.
#[derive(Clone)]
pub struct Property {
    key: String,
    name: String,
    value: Value,
    origin: Arc<str>,
    /// How many leading segments the section that returned it had.
    depth: usize,
    /// The warnings its `Config` has given.
    warned: Warned,
}

impl Property {
    pub(crate) fn new(
        key: String,
        name: String,
        value: Value,
        origin: Arc<str>,
        depth: usize,
        warned: Warned,
    ) -> Property {
        Property {
            key,
            name,
            value,
            origin,
            depth,
            warned,
        }
    }

    /// The name as its source wrote it, e.g. `spring.cloud.openfeign.client.config.default.readTimeout`.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The relaxed name: lower case without `-` and `_` (see [`crate::relaxed`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file, `environment variable NAME`, or `code` the value came from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Whether the value came from an environment variable.
    pub fn from_environment(&self) -> bool {
        self.origin.starts_with(ENV_ORIGIN)
    }

    /// The relaxed name after the section's prefix, e.g. `readtimeout` or
    /// `defaultrequestheaders.x-trace` → `defaultrequestheaders.xtrace`.
    pub fn rest(&self) -> String {
        self.name
            .split('.')
            .skip(self.depth)
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The segments after the section's prefix plus `skip`, joined by `.`, as written (map
    /// keys such as header names keep their case).
    pub fn rest_as_written(&self, skip: usize) -> String {
        self.key
            .split('.')
            .skip(self.depth + skip)
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The value as text (a list joined by `,`).
    pub fn as_str(&self) -> String {
        match &self.value {
            Value::Scalar(s) => s.clone(),
            Value::List(items) => items.join(","),
        }
    }

    /// The value as non-empty text, trimmed.
    pub fn as_non_empty(&self) -> Result<String, ConfigError> {
        let text = self.as_str().trim().to_owned();
        if text.is_empty() {
            return Err(self.error("expected a value, got nothing"));
        }
        Ok(text)
    }

    /// The value as a list: a YAML sequence or `key[i]` lines item by item, otherwise split at
    /// `,`; items are trimmed and empty ones dropped.
    pub fn as_list(&self) -> Vec<String> {
        self.value.items()
    }

    /// A boolean as Spring reads one: `true`/`false`, `on`/`off`, `yes`/`no`, `1`/`0`, any case.
    pub fn as_bool(&self) -> Result<bool, ConfigError> {
        match self.as_str().trim().to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" | "1" => Ok(true),
            "false" | "off" | "no" | "0" => Ok(false),
            _ => Err(self.bad_value("expected true or false")),
        }
    }

    /// A number of type `T` (e.g. `u32`, `u16`, `u64`).
    pub fn as_number<T: FromStr>(&self) -> Result<T, ConfigError> {
        self.as_str()
            .trim()
            .parse::<T>()
            .map_err(|_| self.bad_value(&format!("expected a {}", std::any::type_name::<T>())))
    }

    /// A finite decimal number.
    pub fn as_f64(&self) -> Result<f64, ConfigError> {
        self.as_str()
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .ok_or_else(|| self.bad_value("expected a number"))
    }

    /// A duration: a plain number in `unit`, a Spring simple form (`500ms`, `5s`, `2m`, `1h`,
    /// `1d`) or ISO-8601 (`PT5S`).
    pub fn as_duration(&self, unit: DurationUnit) -> Result<Duration, ConfigError> {
        duration::parse(&self.as_str(), unit).map_err(|why| self.bad_value(why))
    }

    /// A positive duration (see [`Property::as_duration`]).
    pub fn as_positive_duration(&self, unit: DurationUnit) -> Result<Duration, ConfigError> {
        let d = self.as_duration(unit)?;
        if d.is_zero() {
            return Err(self.error("must be greater than zero"));
        }
        Ok(d)
    }

    /// One of `choices` (case-insensitive, relaxed), mapped to its value.
    pub fn as_choice<T: Clone>(&self, choices: &[(&str, T)]) -> Result<T, ConfigError> {
        let wanted = crate::relaxed(self.as_str().trim());
        choices
            .iter()
            .find(|(name, _)| crate::relaxed(name) == wanted)
            .map(|(_, value)| value.clone())
            .ok_or_else(|| {
                let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
                self.bad_value(&format!("expected one of {}", names.join(", ")))
            })
    }

    /// An error about this property: `` `key` in origin: reason ``.
    pub fn error(&self, reason: impl Into<String>) -> ConfigError {
        ConfigError::Property {
            key: self.key.clone(),
            origin: self.origin.to_string(),
            reason: reason.into(),
        }
    }

    /// The error for a property the binder of its section does not know. A binder with a
    /// [`Namespace`](crate::Namespace) gives [`Namespace::unbound`](crate::Namespace::unbound)'s
    /// error instead, which names the nearest known key.
    pub fn unknown(&self) -> ConfigError {
        self.error("unknown property")
    }

    /// Logs a warning about this property at `WARN` (target `feign_config`, fields `key` and
    /// `origin`): `` `key` in origin: why ``. A `Config` and its clones give each warning once,
    /// however many binders read the property. It adds no value of its own: `why` says what
    /// it says.
    pub fn warn(&self, why: impl fmt::Display) {
        let message = format!("`{}` in {}: {why}", self.key, self.origin);
        if self.warned.first(&message) {
            tracing::warn!(
                target: "feign_config",
                key = %self.key,
                origin = %self.origin,
                "{message}"
            );
        }
    }

    /// The error for a value that does not parse; shows the value when it is short and the
    /// name does not suggest a secret.
    pub fn bad_value(&self, expected: &str) -> ConfigError {
        let value = self.as_str();
        if value.chars().count() <= 40 && !crate::key::looks_secret(&self.key) {
            self.error(format!("{expected}, got {value:?}"))
        } else {
            self.error(expected.to_owned())
        }
    }
}

impl fmt::Debug for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Property")
            .field("key", &self.key)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}
