//! [`Config`]: the layered property sources and their lookups.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::property::{Property, ENV_ORIGIN};
use crate::source::{self, Entry, Value};
use crate::warned::Warned;
use crate::{relaxed, ConfigError};

/// Spring-style properties from files, the environment and code, later sources overriding
/// earlier ones.
///
/// [`Config::load`] reads `application.yml` / `application.yaml` / `application.properties`
/// from the working directory, then the environment, as Spring Boot does. Lookups use relaxed
/// names and resolve `${key}` / `${key:default}` placeholders.
///
/// A file may hold several documents (`---` in YAML, `#---` in properties), later ones
/// overriding earlier ones; a document with `spring.config.activate.on-profile` counts only
/// while its profile expression (`prod`, `!test`, `eu & (prod | staging)`) holds for the
/// active profiles: `spring.profiles.active` and `spring.profiles.include` from any source
/// (`SPRING_PROFILES_ACTIVE` in the environment), else `spring.profiles.default` (`default`).
///
/// `Debug` lists the sources, never a value.
/// Two are equal when they hold the same properties from the same sources in the same order.
/// Clones share one record of the warnings [`Property::warn`] gave, so each is given once.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// In the order read; later entries override earlier ones.
    entries: Vec<Entry>,
    warned: Warned,
}

/// The entries of a [`Config`] in force: those of documents whose profiles are active, in
/// order.
struct InForce<'a> {
    entries: Vec<&'a Entry>,
    warned: &'a Warned,
}

/// The files Spring Boot reads from a directory, in order.
pub(crate) const APPLICATION_FILES: [&str; 3] = [
    "application.yml",
    "application.yaml",
    "application.properties",
];

/// How deep placeholders may refer to placeholders.
const MAX_PLACEHOLDER_DEPTH: usize = 8;

impl Config {
    /// No properties.
    pub fn new() -> Self {
        Config::default()
    }

    /// What Spring Boot reads by default: `application.yml`, `application.yaml`, then
    /// `application.properties` (each if present) from the working directory, then the
    /// environment.
    pub fn load() -> Result<Self, ConfigError> {
        Config::load_from(".")
    }

    /// Like [`Config::load`], with the files read from `dir`: the environment is layered over
    /// them too, as Spring Boot does (`SERVER_PORT` overrides the file's `server.port`; see
    /// [`Config::with_env`]). For the files alone, use [`Config::from_file`] or
    /// [`Config::with_file`].
    pub fn load_from(dir: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let dir = dir.as_ref();
        let mut config = Config::new();
        for name in APPLICATION_FILES {
            let path = dir.join(name);
            if path.is_file() {
                config = config.with_file(path)?;
            }
        }
        Ok(config.with_env())
    }

    /// Reads one file: YAML for `.yml` / `.yaml`, properties otherwise.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Config::new().with_file(path)
    }

    /// Reads a YAML document; `origin` names it in errors.
    pub fn from_yaml_str(text: &str, origin: &str) -> Result<Self, ConfigError> {
        Ok(Config {
            entries: source::yaml(text, &Arc::from(origin))?,
            warned: Warned::default(),
        })
    }

    /// Reads a properties document; `origin` names it in errors.
    pub fn from_properties_str(text: &str, origin: &str) -> Result<Self, ConfigError> {
        Ok(Config {
            entries: source::properties(text, &Arc::from(origin))?,
            warned: Warned::default(),
        })
    }

    /// Adds a file over these properties.
    pub fn with_file(self, path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::source(&origin, e.to_string()))?;
        Ok(self.with(Config::from_file_text(path, &text)?))
    }

    /// The text of the file at `path`: YAML for `.yml` / `.yaml`, properties otherwise.
    pub(crate) fn from_file_text(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let origin = path.display().to_string();
        match path.extension().and_then(|e| e.to_str()) {
            Some("yml" | "yaml") => Config::from_yaml_str(text, &origin),
            _ => Config::from_properties_str(text, &origin),
        }
    }

    /// Adds `other` over these properties.
    #[must_use]
    pub fn with(mut self, other: Config) -> Self {
        self.entries.extend(other.entries);
        self
    }

    /// Adds the process environment over these properties, Spring's way:
    /// `SPRING_CLOUD_OPENFEIGN_CLIENT_CONFIG_DEFAULT_READTIMEOUT` is
    /// `spring.cloud.openfeign.client.config.default.read-timeout`.
    #[must_use]
    pub fn with_env(self) -> Self {
        self.with_env_vars(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// Like [`Config::with_env`], from the given variables. Names that are not upper-case
    /// letters, digits and `_` are skipped.
    #[must_use]
    pub fn with_env_vars<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: Into<String>,
    {
        for (name, value) in vars {
            let name = name.as_ref();
            if let Some(key) = crate::key::from_env_name(name) {
                let origin: Arc<str> = Arc::from(format!("{ENV_ORIGIN}{name}"));
                self.entries
                    .push(Entry::new(key, Value::Scalar(value.into()), &origin));
            }
        }
        self
    }

    /// Sets one property over the others; errors name its source as `code`.
    #[must_use]
    pub fn set(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        let origin: Arc<str> = Arc::from("code");
        self.entries
            .push(Entry::new(key.into(), Value::Scalar(value.into()), &origin));
        self
    }

    /// Whether no property is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The winning value of `key` (relaxed name), placeholders resolved.
    pub fn get(&self, key: &str) -> Result<Option<Property>, ConfigError> {
        let in_force = self.in_force();
        match in_force.latest(&relaxed(key)) {
            Some(entry) => in_force.resolved(entry, 0).map(Some),
            None => Ok(None),
        }
    }

    /// Every property under `prefix` (relaxed; `prefix` itself included), the winning value of
    /// each, sorted by name, placeholders resolved. [`Property::rest`] is the part after
    /// `prefix`.
    pub fn section(&self, prefix: &str) -> Result<Vec<Property>, ConfigError> {
        let prefix = relaxed(prefix.trim_end_matches('.'));
        let depth = prefix.split('.').count();
        let in_force = self.in_force();
        let mut latest: BTreeMap<&str, &Entry> = BTreeMap::new();
        for entry in &in_force.entries {
            let inside = entry
                .name
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'));
            if inside {
                latest.insert(&entry.name, entry);
            }
        }
        // The prefix itself counts unless its winning value is an empty map (`loadbalancer:`
        // with nothing under it), which hides what earlier sources gave it.
        if latest
            .get(prefix.as_str())
            .is_some_and(|entry| entry.value == Value::Scalar(String::new()))
        {
            latest.remove(prefix.as_str());
        }
        latest
            .into_values()
            .map(|entry| in_force.resolved(entry, depth))
            .collect()
    }

    /// Whether `other` holds the same values under `prefix` as this: the winning value of
    /// each property (placeholders resolved), whatever source it came from. A section whose
    /// placeholders do not resolve in either differs. What a live client or balancer compares
    /// to keep the state of the parts whose properties did not change.
    pub fn same_section(&self, other: &Config, prefix: &str) -> bool {
        let values = |config: &Config| -> Option<Vec<(String, String)>> {
            let properties = config.section(prefix).ok()?;
            Some(
                properties
                    .iter()
                    .map(|p| (p.name().to_owned(), p.as_str()))
                    .collect(),
            )
        };
        matches!((values(self), values(other)), (Some(a), Some(b)) if a == b)
    }

    /// The names of the maps under `prefix`: for `a.b` with `a.b.x.c` and `a.b.y.d`, `x` and
    /// `y` (relaxed), each once.
    pub fn section_names(&self, prefix: &str) -> Vec<String> {
        let prefix = format!("{}.", relaxed(prefix.trim_end_matches('.')));
        let mut names: Vec<String> = self
            .in_force()
            .entries
            .iter()
            .filter_map(|e| e.name.strip_prefix(prefix.as_str()))
            .filter_map(|rest| rest.split_once('.').map(|(name, _)| name.to_owned()))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The entries of the documents whose profiles are active.
    fn in_force(&self) -> InForce<'_> {
        let active = if self.entries.iter().any(|e| e.on_profile.is_some()) {
            self.active_profiles()
        } else {
            Vec::new()
        };
        InForce {
            entries: self
                .entries
                .iter()
                .filter(|e| e.on_profile.as_ref().is_none_or(|p| p.matches(&active)))
                .collect(),
            warned: &self.warned,
        }
    }

    /// `spring.profiles.active` and `spring.profiles.include` (from documents for every
    /// profile), else `spring.profiles.default`, else `default`.
    fn active_profiles(&self) -> Vec<String> {
        let latest = |name: &str| {
            self.entries
                .iter()
                .rev()
                .find(|e| e.on_profile.is_none() && e.name == name)
                .map(|e| e.value.items())
                .unwrap_or_default()
        };
        let mut active = latest("spring.profiles.active");
        active.extend(latest("spring.profiles.include"));
        if active.is_empty() {
            active = latest("spring.profiles.default");
        }
        if active.is_empty() {
            active.push("default".to_owned());
        }
        active
    }
}

impl InForce<'_> {
    fn latest(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|e| e.name == name).copied()
    }

    fn resolved(&self, entry: &Entry, depth: usize) -> Result<Property, ConfigError> {
        let value = match &entry.value {
            Value::Scalar(s) => Value::Scalar(self.resolve(entry, s, 0)?),
            Value::List(items) => Value::List(
                items
                    .iter()
                    .map(|s| self.resolve(entry, s, 0))
                    .collect::<Result<_, _>>()?,
            ),
        };
        Ok(Property::new(
            entry.key.clone(),
            entry.name.clone(),
            value,
            entry.origin.clone(),
            depth,
            self.warned.clone(),
        ))
    }

    /// Replaces `${key}` and `${key:default}` in `text`; an unknown key without a default, or
    /// placeholders nested too deep, is an error naming `entry`.
    fn resolve(&self, entry: &Entry, text: &str, level: usize) -> Result<String, ConfigError> {
        if !text.contains("${") {
            return Ok(text.to_owned());
        }
        let error = |reason: String| ConfigError::Property {
            key: entry.key.clone(),
            origin: entry.origin.to_string(),
            reason,
        };
        if level >= MAX_PLACEHOLDER_DEPTH {
            return Err(error("placeholders nested too deep (or circular)".into()));
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err(error("a `${` placeholder is not closed".into()));
            };
            let inner = &after[..end];
            let (key, default) = match inner.split_once(':') {
                Some((k, d)) => (k.trim(), Some(d)),
                None => (inner.trim(), None),
            };
            let value = match (self.latest(&relaxed(key)), default) {
                (Some(found), _) => {
                    let raw = match &found.value {
                        Value::Scalar(s) => s.clone(),
                        Value::List(items) => items.join(","),
                    };
                    self.resolve(entry, &raw, level + 1)?
                }
                (None, Some(default)) => self.resolve(entry, default, level + 1)?,
                (None, None) => {
                    return Err(error(format!("placeholder `${{{key}}}` has no value")))
                }
            };
            out.push_str(&value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut origins: Vec<&str> = Vec::new();
        for entry in &self.entries {
            if !origins.contains(&&*entry.origin) {
                origins.push(&entry.origin);
            }
        }
        f.debug_struct("Config")
            .field("properties", &self.entries.len())
            .field("sources", &origins)
            .finish()
    }
}
