//! The client's error type.

/// What can go wrong building, starting or configuring a [`crate::EurekaClient`].
///
/// Messages never contain credentials: service URLs are shown without their user info.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Neither a service URL nor anything else to talk to.
    #[error("no eureka service url configured")]
    NoServiceUrl,
    /// A service URL that cannot be used.
    #[error("invalid eureka service url {url}: {reason}")]
    InvalidServiceUrl {
        /// The URL, without user info.
        url: String,
        /// Why it was refused.
        reason: String,
    },
    /// The client was built with neither registration nor discovery.
    #[error("nothing to do: registration and registry fetching are both disabled")]
    NothingToDo,
    /// An instance configuration that cannot be registered.
    #[error("invalid instance configuration: {0}")]
    InvalidInstance(String),
    /// A configuration key that is unknown or has an unusable value.
    #[error("invalid configuration key `{key}` in {origin}: {reason}")]
    Config {
        /// The key as written in the file or environment.
        key: String,
        /// The file (or `environment variable NAME`, or `code`) it came from.
        origin: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A configuration file that could not be read or parsed.
    #[error("cannot read configuration: {0}")]
    ConfigFile(String),
    /// The first registry fetch failed and the client was told to require it.
    #[error("initial registry fetch failed: {0}")]
    InitialFetch(String),
    /// An on-demand registry fetch ([`crate::EurekaClient::refresh`]) failed; the cached
    /// registry is kept.
    #[error("registry fetch failed: {0}")]
    Fetch(String),
    /// The HTTP client could not be built.
    #[error("cannot build the http client: {0}")]
    HttpClient(String),
}

impl From<feign_config::ConfigError> for Error {
    fn from(error: feign_config::ConfigError) -> Self {
        match error {
            feign_config::ConfigError::Property {
                key,
                origin,
                reason,
            } => Error::Config {
                key,
                origin,
                reason,
            },
            other => Error::ConfigFile(other.to_string()),
        }
    }
}
