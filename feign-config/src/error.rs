//! The one error of configuration: a source that cannot be read, or a property that is wrong.

/// A configuration mistake, reported at start: it names the property and where it came from.
///
/// Messages never carry a long value, and never the value of a property whose name suggests a
/// secret (`password`, `secret`, `token`, `credential`, `key` in the last segment).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A file could not be read or parsed.
    #[error("cannot read {origin}: {reason}")]
    Source {
        /// The file, as given.
        origin: String,
        /// Why.
        reason: String,
    },
    /// A property's name or value is wrong.
    #[error("`{key}` in {origin}: {reason}")]
    Property {
        /// The property, as written in its source.
        key: String,
        /// The file or environment variable it came from.
        origin: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl ConfigError {
    /// The property at fault, if the error is about one.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Source { .. } => None,
            ConfigError::Property { key, .. } => Some(key),
        }
    }

    /// The file (or `environment variable NAME`, or `code`) the mistake is in.
    pub fn origin(&self) -> &str {
        match self {
            ConfigError::Source { origin, .. } | ConfigError::Property { origin, .. } => origin,
        }
    }

    /// A source that cannot be read.
    pub(crate) fn source(origin: &str, reason: impl Into<String>) -> Self {
        ConfigError::Source {
            origin: origin.to_owned(),
            reason: reason.into(),
        }
    }
}
