//! The client's error type, and the internal errors it carries as its source.

use std::error::Error as StdError;
use std::fmt;

/// The source of an [`Error`]: one of the client's internal errors, or the HTTP library's.
type BoxError = Box<dyn StdError + Send + Sync>;

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
    /// The client is disabled: `eureka.client.enabled: false`, or
    /// [`EurekaClientBuilder::enabled`](crate::EurekaClientBuilder::enabled).
    #[error("the eureka client is disabled (eureka.client.enabled: false)")]
    Disabled,
    /// The client was built with neither registration nor discovery.
    #[error("nothing to do: registration and registry fetching are both disabled")]
    NothingToDo,
    /// An instance configuration that cannot be registered.
    #[error("invalid instance configuration: {0}")]
    InvalidInstance(String),
    /// A configuration key that is unknown or has an unusable value.
    #[cfg(feature = "config")]
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
    #[cfg(feature = "config")]
    #[error("cannot read configuration")]
    ConfigFile(#[source] feign_config::ConfigError),
    /// The first registry fetch failed and the client was told to require it. The source
    /// says why (the server and what failed, or why the document was unreadable).
    #[error("initial registry fetch failed")]
    InitialFetch(#[source] BoxError),
    /// An on-demand registry fetch ([`crate::EurekaClient::refresh`]) failed; the cached
    /// registry is kept. The source says why.
    #[error("registry fetch failed")]
    Fetch(#[source] BoxError),
    /// The configuration turned the health check on
    /// (`eureka.client.healthcheck.enabled: true`) but none was given.
    #[error("eureka.client.healthcheck.enabled is true but no health check was given (EurekaClientBuilder::health_check)")]
    NoHealthCheck,
    /// The HTTP client could not be built.
    #[error("cannot build the http client")]
    HttpClient(#[source] BoxError),
}

#[cfg(feature = "config")]
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
            other => Error::ConfigFile(other),
        }
    }
}

/// Why a call to the Eureka servers failed; messages never contain credentials.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    /// No server left to try.
    #[error("no eureka server to try")]
    NoServer,
    /// The last server tried answered with a status the call does not accept.
    #[error("{url} answered {status}")]
    Status {
        /// The URL called, without user info.
        url: String,
        /// The status it answered.
        status: u16,
    },
    /// The request failed: `kind` is `timed out`, `connection failed`, ...
    #[error("{url}: {kind}")]
    Request {
        /// The URL called, without user info.
        url: String,
        /// What failed, in a few words.
        kind: &'static str,
        /// The HTTP library's error.
        #[source]
        source: reqwest::Error,
    },
    /// The body was longer than the configured limit.
    #[error("{url}: body larger than {limit} bytes")]
    TooLarge {
        /// The URL called, without user info.
        url: String,
        /// The limit, in bytes.
        limit: usize,
    },
}

/// Why a registry fetch failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FetchError {
    /// The call failed.
    #[error(transparent)]
    Call(#[from] CallError),
    /// The server answered a document that is not a Eureka registry.
    #[error("unreadable registry")]
    Unreadable(#[source] serde_json::Error),
}

/// Shows an error and its sources, `: `-separated, for log lines.
pub(crate) struct Chain<'a>(pub(crate) &'a (dyn StdError + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}
