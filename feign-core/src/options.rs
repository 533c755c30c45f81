//! Per-client transport options and log levels.

use std::time::Duration;

use crate::meta::MethodOptions;

/// Timeouts and redirect handling of a client; a method's `#[options(...)]` overrides them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    connect_timeout: Duration,
    read_timeout: Duration,
    total_timeout: Option<Duration>,
    follow_redirects: bool,
}

impl Default for Options {
    /// Connect 10 s, read 60 s (OpenFeign's), no total timeout, redirects not followed.
    fn default() -> Self {
        Options {
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(60),
            total_timeout: None,
            follow_redirects: false,
        }
    }
}

impl Options {
    /// The defaults: see [`Options::default`].
    pub fn new() -> Self {
        Options::default()
    }

    /// How long establishing a connection may take. Default 10 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long to wait for the response head, and between two reads of the body. Default 60 s.
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }

    /// A deadline for the whole call, retries and their delays included. Default none.
    pub fn total_timeout(mut self, timeout: Duration) -> Self {
        self.total_timeout = Some(timeout);
        self
    }

    /// Whether same-origin redirects are followed (at most 5). Default false: a 3xx is
    /// handed to the error decoder.
    pub fn follow_redirects(mut self, follow: bool) -> Self {
        self.follow_redirects = follow;
        self
    }

    /// The connect timeout.
    pub fn get_connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The read timeout.
    pub fn get_read_timeout(&self) -> Duration {
        self.read_timeout
    }

    /// The total timeout, if any.
    pub fn get_total_timeout(&self) -> Option<Duration> {
        self.total_timeout
    }

    /// Whether redirects are followed.
    pub fn get_follow_redirects(&self) -> bool {
        self.follow_redirects
    }

    /// These options with a method's overrides applied.
    pub(crate) fn with_method(self, method: &MethodOptions) -> Options {
        Options {
            connect_timeout: method
                .connect_timeout_ms
                .map_or(self.connect_timeout, Duration::from_millis),
            read_timeout: method
                .read_timeout_ms
                .map_or(self.read_timeout, Duration::from_millis),
            total_timeout: method
                .total_timeout_ms
                .map(Duration::from_millis)
                .or(self.total_timeout),
            follow_redirects: method.follow_redirects.unwrap_or(self.follow_redirects),
        }
    }
}

/// How much of each call is logged through `tracing` (target `feign_core`, level DEBUG).
///
/// Sensitive headers and URL secrets are redacted at every level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum LogLevel {
    /// Nothing (the default).
    #[default]
    None,
    /// Method, URL, status and elapsed time.
    Basic,
    /// `Basic` plus request and response headers.
    Headers,
    /// `Headers` plus the first 4 KiB of request and response bodies.
    Full,
}
