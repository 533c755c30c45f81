//! [`Namespace`] and [`Key`]: what a binder knows of the keys under its prefixes. Each key is
//! bound, a Spring key accepted and ignored with a warning, or refused with a reason; any
//! other key there is unknown, and its error names the nearest known key.

use crate::nearest::{self, Candidate};
use crate::{relaxed, Config, ConfigError, Property};

/// One key, or a family of keys, a [`Namespace`] knows, relative to its group's prefix.
///
/// A pattern is dotted, written as Spring documents it (`read-timeout`; compared relaxed): `*`
/// stands for one segment (a client's name), `**`, last, for one or more (a map's keys, such as
/// header names).
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pattern: &'static str,
    kind: Kind,
    /// A boolean value taken silently whatever the kind: what feign-rs does anyway.
    unless: Option<bool>,
}

/// What [`Namespace::check`] does with a key.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A binder reads it.
    Bound,
    /// Accepted and ignored, with a warning naming it and saying why.
    Ignored(&'static str),
    /// An error naming it and saying why.
    Refused(&'static str),
}

impl Key {
    /// A key a binder reads (this crate's or, with a comment saying so, another's).
    pub const fn bound(pattern: &'static str) -> Key {
        Key {
            pattern,
            kind: Kind::Bound,
            unless: None,
        }
    }

    /// A Spring key accepted and ignored: [`Namespace::check`] logs a warning naming it,
    /// `ignored: {why}` (see [`Property::warn`]).
    pub const fn ignored(pattern: &'static str, why: &'static str) -> Key {
        Key {
            pattern,
            kind: Kind::Ignored(why),
            unless: None,
        }
    }

    /// A key refused: [`Namespace::check`] returns an error naming it, `not supported: {why}`.
    pub const fn refused(pattern: &'static str, why: &'static str) -> Key {
        Key {
            pattern,
            kind: Kind::Refused(why),
            unless: None,
        }
    }

    /// The same key, taken silently when its value is the boolean `value` (what feign-rs does
    /// anyway): only another value is warned about or refused. A value that is not a boolean
    /// is an error.
    #[must_use]
    pub const fn unless(mut self, value: bool) -> Key {
        self.unless = Some(value);
        self
    }

    /// Warns about or refuses `property`, as this key's kind says.
    fn apply(&self, property: &Property) -> Result<(), ConfigError> {
        if let Some(value) = self.unless {
            if property.as_bool()? == value {
                return Ok(());
            }
        }
        match self.kind {
            Kind::Bound => {}
            Kind::Ignored(why) => property.warn(format_args!("ignored: {why}")),
            Kind::Refused(why) => return Err(property.error(format!("not supported: {why}"))),
        }
        Ok(())
    }
}

/// The keys a binder knows under one prefix (`spring.cloud.openfeign`, `eureka`): every
/// property there is bound, accepted and ignored with a warning, refused with a reason, or
/// unknown, and then refused with the nearest known key suggested:
/// `` `spring.cloud.openfeign.compresion.request.enabled` in application.yml: unknown property, did you mean `spring.cloud.openfeign.compression.request.enabled`? ``
///
/// A binder calls [`check`](Namespace::check) before it binds anything, then returns
/// [`unbound`](Namespace::unbound) for a key its own `match` does not take.
///
/// ```
/// use feign_config::{Config, Key, Namespace};
///
/// const ORDERS: Namespace = Namespace::new(
///     "orders",
///     &[
///         ("", &[Key::bound("read-timeout"), Key::ignored("jmx.enabled", "there is no JMX")]),
///         ("clients.*", &[Key::bound("url"), Key::bound("headers.**")]),
///     ],
/// );
/// let config = Config::from_yaml_str(
///     "orders:\n  read-timeout: 2s\n  jmx.enabled: true\n  clients.billing.url: http://b\n",
///     "application.yml",
/// )?;
/// ORDERS.check(&config)?; // and a warning: `orders.jmx.enabled` in application.yml: ignored: there is no JMX
///
/// let typo = Config::from_yaml_str("orders.clients.billing.ulr: http://b\n", "application.yml")?;
/// assert_eq!(
///     ORDERS.check(&typo).unwrap_err().to_string(),
///     "`orders.clients.billing.ulr` in application.yml: unknown property, did you mean `orders.clients.billing.url`?"
/// );
/// # Ok::<(), feign_config::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Namespace {
    prefix: &'static str,
    groups: &'static [(&'static str, &'static [Key])],
}

impl Namespace {
    /// The keys under `prefix`, in groups: each group's prefix (relative, `""` for the
    /// namespace itself, `clients.*` for every client's section) and its keys.
    pub const fn new(
        prefix: &'static str,
        groups: &'static [(&'static str, &'static [Key])],
    ) -> Namespace {
        Namespace { prefix, groups }
    }

    /// The prefix.
    pub fn prefix(&self) -> &'static str {
        self.prefix
    }

    /// Checks every property under the prefix: a bound key passes (its binder checks the
    /// value), an ignored one is warned about (once per `Config`), a refused one is an error
    /// saying why, any other is an unknown-property error naming the nearest known key.
    pub fn check(&self, config: &Config) -> Result<(), ConfigError> {
        for property in config.section(self.prefix)? {
            match self.find(&property) {
                Some(key) => key.apply(&property)?,
                None => self.unknown(&property)?,
            }
        }
        Ok(())
    }

    /// What a binder returns for a property under this prefix that its `match` does not take:
    /// `Ok` for a key accepted and ignored (warned about as [`check`](Namespace::check) does),
    /// the refusal for a refused one, and the unknown-property error (with the nearest known
    /// key) for any other, a bound key included: its binder should have taken it.
    pub fn unbound(&self, property: &Property) -> Result<(), ConfigError> {
        match self.find(property) {
            Some(key) if !matches!(key.kind, Kind::Bound) => key.apply(property),
            _ => self.unknown(property),
        }
    }

    /// One key for each bound pattern, its wildcards filled with `x`: what a binder's test
    /// feeds the binder to see that it takes every key this namespace says it binds.
    pub fn bound_examples(&self) -> Vec<String> {
        self.keys()
            .filter(|(_, key)| matches!(key.kind, Kind::Bound))
            .map(|(pattern, _)| {
                let filled: Vec<&str> = pattern
                    .split('.')
                    .map(|s| if s.starts_with('*') { "x" } else { s })
                    .collect();
                format!("{}.{}", self.prefix, filled.join("."))
            })
            .collect()
    }

    /// Every key with its group's prefix, as one pattern.
    fn keys(&self) -> impl Iterator<Item = (String, &'static Key)> + '_ {
        self.groups.iter().flat_map(|(group, keys)| {
            keys.iter().map(move |key| {
                let pattern = if group.is_empty() {
                    key.pattern.to_owned()
                } else {
                    format!("{group}.{}", key.pattern)
                };
                (pattern, key)
            })
        })
    }

    /// The segments of `property`'s name after the prefix, relaxed; `None` outside it.
    fn rest(&self, property: &Property) -> Option<Vec<String>> {
        let prefix = relaxed(self.prefix);
        let rest = property.name().strip_prefix(prefix.as_str())?;
        let rest = rest.strip_prefix('.')?;
        Some(rest.split('.').map(str::to_owned).collect())
    }

    /// The first key whose pattern matches `property`.
    fn find(&self, property: &Property) -> Option<&'static Key> {
        let rest = self.rest(property)?;
        self.keys()
            .find(|(pattern, _)| matches(pattern, &rest))
            .map(|(_, key)| key)
    }

    /// An unknown property: refused with the nearest known key if one is near, or, when it
    /// comes from an environment variable, warned about and ignored: the environment is shared
    /// with other programs, whose variables may fall under the prefix (`FEIGN_…`, `EUREKA_…`).
    fn unknown(&self, property: &Property) -> Result<(), ConfigError> {
        let why = match self.nearest(property) {
            Some(near) => format!("unknown property, did you mean `{}.{near}`?", self.prefix),
            None => "unknown property".to_owned(),
        };
        if property.from_environment() {
            property.warn(format_args!(
                "{why} (ignored: an environment variable may belong to another program)"
            ));
            return Ok(());
        }
        Err(property.error(why))
    }

    /// The known key nearest to `property`'s, as `property` writes the parts a pattern leaves
    /// open; `None` when none is near.
    fn nearest(&self, property: &Property) -> Option<String> {
        let rest = self.rest(property)?;
        let depth = self.prefix.split('.').count();
        let written: Vec<&str> = property.key().split('.').skip(depth).collect();
        let candidates = self
            .keys()
            .map(|(pattern, _)| Candidate::fill(&pattern, &written))
            .collect();
        nearest::nearest(&rest, candidates).map(|near| near.written.join("."))
    }
}

/// The namespaces of one binder (feign-core's `spring.cloud.openfeign`, `feign` and
/// `resilience4j`), checked together.
#[derive(Debug, Clone, Copy)]
pub struct Namespaces(&'static [Namespace]);

impl Namespaces {
    /// These namespaces.
    pub const fn new(namespaces: &'static [Namespace]) -> Namespaces {
        Namespaces(namespaces)
    }

    /// [`Namespace::check`] of each.
    pub fn check(&self, config: &Config) -> Result<(), ConfigError> {
        self.0
            .iter()
            .try_for_each(|namespace| namespace.check(config))
    }

    /// [`Namespace::unbound`] of the namespace `property` is in; outside them all, the plain
    /// unknown-property error.
    pub fn unbound(&self, property: &Property) -> Result<(), ConfigError> {
        match self.0.iter().find(|n| n.rest(property).is_some()) {
            Some(namespace) => namespace.unbound(property),
            None => Err(property.unknown()),
        }
    }

    /// [`Namespace::bound_examples`] of each.
    pub fn bound_examples(&self) -> Vec<String> {
        self.0.iter().flat_map(Namespace::bound_examples).collect()
    }
}

/// Whether `pattern` matches the relaxed segments `name`.
fn matches(pattern: &str, name: &[String]) -> bool {
    let mut segments = pattern.split('.');
    let mut i = 0;
    for segment in segments.by_ref() {
        match segment {
            "**" => return name.len() > i,
            "*" if i < name.len() => {}
            literal if i < name.len() && same(literal, &name[i]) => {}
            _ => return false,
        }
        i += 1;
    }
    i == name.len()
}

/// Whether a pattern's literal segment, relaxed, is `name`.
fn same(literal: &str, name: &str) -> bool {
    literal
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .eq(name.chars())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(key: &str) -> Vec<String> {
        relaxed(key).split('.').map(str::to_owned).collect()
    }

    #[test]
    fn patterns_match_segments_and_wildcards() {
        assert!(matches("read-timeout", &name("readTimeout")));
        assert!(matches("config.*.url", &name("config.orders.url")));
        assert!(!matches("config.*.url", &name("config.url")));
        assert!(!matches("config.*.url", &name("config.a.b.url")));
        assert!(matches("headers.**", &name("headers.X-A")));
        assert!(matches("headers.**", &name("headers.a.b")));
        assert!(!matches("headers.**", &name("headers")));
        assert!(!matches("a.b", &name("a")));
        assert!(!matches("a", &name("a.b")));
    }
}
