//! The one error type of every client call: opaque, one pointer wide, shaped like reqwest's.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, StatusCode};

/// A boxed error as transports and user code produce them.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in a client call.
///
/// Opaque like `reqwest::Error`: ask it what happened with the `is_*` methods, [`Error::status`]
/// and the accessors, and walk [`std::error::Error::source`] for the cause. Neither `Display`
/// nor `Debug` ever shows a password, a sensitive query value or a sensitive header.
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: Kind,
    message: Cow<'static, str>,
    source: Option<BoxError>,
    method_key: Option<&'static str>,
    url: Option<Box<str>>,
    status: Option<StatusCode>,
    headers: Option<HeaderMap>,
    body: Option<Bytes>,
    retry_after: Option<Duration>,
    retry_budget_exhausted: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Invalid configuration found by `build()`.
    Builder,
    /// A configuration property `Builder::config` could not bind.
    Config,
    /// An argument could not be turned into a request (path, query, header, body encoding).
    Request,
    /// The connection could not be established: nothing was sent.
    Connect,
    /// A connect, read or total timeout fired.
    Timeout,
    /// The transport failed after the request may have been sent.
    Transport,
    /// The response body could not be read or was truncated.
    Body,
    /// The response body was over the size limit.
    BodyTooLarge,
    /// A non-2xx status.
    Status,
    /// The body could not be decoded.
    Decode,
    /// The resolver had no instance to offer.
    NoInstance,
    /// An interceptor refused the request.
    Interceptor,
    /// A user-defined error, typically from an `ErrorDecoder`.
    Custom,
    /// An open circuit breaker refused the call: nothing was sent.
    CircuitOpen,
    /// The bulkhead had no free slot within its wait: nothing was sent.
    BulkheadFull,
}

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Kind::Builder => "invalid client configuration",
            Kind::Config => "invalid configuration",
            Kind::Request => "invalid request",
            Kind::Connect => "connection failed",
            Kind::Timeout => "timed out",
            Kind::Transport => "request failed",
            Kind::Body => "response body error",
            Kind::BodyTooLarge => "response body too large",
            Kind::Status => "unsuccessful status",
            Kind::Decode => "response decode failed",
            Kind::NoInstance => "no instance available",
            Kind::Interceptor => "request interceptor failed",
            Kind::Custom => "client error",
            Kind::CircuitOpen => "circuit breaker open",
            Kind::BulkheadFull => "bulkhead full",
        }
    }

    /// A short, fixed name for metrics and spans (`error.type`); kinds that never end an
    /// attempt without a response share OpenTelemetry's `_OTHER`.
    fn label(self) -> &'static str {
        match self {
            Kind::Timeout => "timeout",
            Kind::Connect => "connect",
            Kind::BodyTooLarge => "body_too_large",
            Kind::Body => "body",
            Kind::Transport => "transport",
            Kind::NoInstance => "no_instance",
            Kind::Interceptor => "interceptor",
            Kind::Request => "request",
            Kind::Decode => "decode",
            Kind::Builder
            | Kind::Config
            | Kind::Status
            | Kind::Custom
            | Kind::CircuitOpen
            | Kind::BulkheadFull => "_OTHER",
        }
    }
}

impl Error {
    /// The error of a response body over `limit` bytes.
    pub(crate) fn response_too_large(limit: impl fmt::Display) -> Error {
        Error::new(
            Kind::BodyTooLarge,
            format!("response body over the {limit}-byte limit"),
        )
    }

    pub(crate) fn new(kind: Kind, message: impl Into<Cow<'static, str>>) -> Error {
        Error {
            inner: Box::new(Inner {
                kind,
                message: message.into(),
                source: None,
                method_key: None,
                url: None,
                status: None,
                headers: None,
                body: None,
                retry_after: None,
                retry_budget_exhausted: false,
            }),
        }
    }

    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Error {
        self.inner.source = Some(source.into());
        self
    }

    /// An error for invalid client configuration, as `build()` reports it.
    pub fn builder(message: impl Into<Cow<'static, str>>) -> Error {
        Error::new(Kind::Builder, message)
    }

    /// An error for an argument that cannot be sent, reported before any connection is made.
    pub fn request(message: impl Into<Cow<'static, str>>) -> Error {
        Error::new(Kind::Request, message)
    }

    /// A connection error: nothing was sent, so any method may be retried. For `Client`
    /// implementations.
    pub fn connect(source: impl Into<BoxError>) -> Error {
        Error::new(Kind::Connect, "").with_source(source)
    }

    /// A timeout. For `Client` implementations.
    pub fn timeout(message: impl Into<Cow<'static, str>>) -> Error {
        Error::new(Kind::Timeout, message)
    }

    /// A transport failure after the request may have been sent. For `Client` implementations.
    pub fn transport(source: impl Into<BoxError>) -> Error {
        Error::new(Kind::Transport, "").with_source(source)
    }

    /// An error reading the response body.
    pub fn body_error(message: impl Into<Cow<'static, str>>) -> Error {
        Error::new(Kind::Body, message)
    }

    /// A decode error, for `Decoder` implementations.
    pub fn decode(source: impl Into<BoxError>) -> Error {
        Error::new(Kind::Decode, "").with_source(source)
    }

    /// A resolver found no instance of `service`; `reason` says why (none registered, all
    /// filtered out, all ejected). For `Resolver` implementations.
    pub fn no_instance(service: &str, reason: &str) -> Error {
        Error::new(
            Kind::NoInstance,
            format!("no instance of `{service}`: {reason}"),
        )
    }

    /// An interceptor's refusal to send the request.
    pub fn interceptor(message: impl Into<Cow<'static, str>>) -> Error {
        Error::new(Kind::Interceptor, message)
    }

    /// A non-2xx status with the response's headers and (already capped) body, as the default
    /// `ErrorDecoder` makes it.
    pub fn status_error(status: StatusCode, headers: HeaderMap, body: Bytes) -> Error {
        let mut err = Error::new(Kind::Status, "");
        err.inner.status = Some(status);
        err.inner.headers = Some(headers);
        err.inner.body = Some(body);
        err
    }

    /// Wraps a user's own error, typically returned by an `ErrorDecoder`; get it back with
    /// [`Error::downcast_ref`].
    pub fn custom<E: std::error::Error + Send + Sync + 'static>(error: E) -> Error {
        Error::new(Kind::Custom, "").with_source(error)
    }

    /// An open (or half-open and fully booked) circuit breaker refused the call.
    pub(crate) fn circuit_open(breaker: &str) -> Error {
        Error::new(
            Kind::CircuitOpen,
            format!("`{breaker}`{CIRCUIT_OPEN_SUFFIX}"),
        )
    }

    /// The bulkhead of `client` had no free slot.
    pub(crate) fn bulkhead_full(client: &str, max_concurrent_calls: u32) -> Error {
        Error::new(
            Kind::BulkheadFull,
            format!("`{client}` already has {max_concurrent_calls} calls in flight"),
        )
    }

    /// The adaptive concurrency limit of `client` was reached: shed, as from a full bulkhead.
    pub(crate) fn adaptive_limit_reached(client: &str, limit: u32) -> Error {
        Error::new(
            Kind::BulkheadFull,
            format!("`{client}` is at its adaptive concurrency limit of {limit} calls in flight"),
        )
    }

    /// Sets the status this error was caused by.
    pub fn with_status(mut self, status: StatusCode) -> Error {
        self.inner.status = Some(status);
        self
    }

    /// Marks the error as the last one of a call whose retry a retry budget refused.
    pub(crate) fn with_retry_budget_exhausted(mut self) -> Error {
        self.inner.retry_budget_exhausted = true;
        self
    }

    /// Sets how long the server asked to wait before a retry.
    pub fn with_retry_after(mut self, delay: Duration) -> Error {
        self.inner.retry_after = Some(delay);
        self
    }

    pub(crate) fn with_method_key(mut self, key: &'static str) -> Error {
        if self.inner.method_key.is_none() {
            self.inner.method_key = Some(key);
        }
        self
    }

    pub(crate) fn with_url(mut self, url: &str) -> Error {
        if self.inner.url.is_none() {
            self.inner.url = Some(crate::redact::url(url).to_string().into_boxed_str());
        }
        self
    }

    /// The response status, for an error caused by a response.
    pub fn status(&self) -> Option<StatusCode> {
        self.inner.status
    }

    /// The response headers of a status error. Print them through `Debug` of the error only:
    /// they are kept as received.
    pub fn headers(&self) -> Option<&HeaderMap> {
        self.inner.headers.as_ref()
    }

    /// The start of the response body of a status error (at most 8 KiB by default).
    pub fn body(&self) -> Option<&Bytes> {
        self.inner.body.as_ref()
    }

    /// The method key of the failed call, e.g. `OrderService#get_order`.
    pub fn method_key(&self) -> Option<&str> {
        self.inner.method_key
    }

    /// The URL of the failed call, with passwords and sensitive query values removed.
    pub fn url(&self) -> Option<&str> {
        self.inner.url.as_deref()
    }

    /// How long the server asked to wait (`Retry-After`), if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        self.inner.retry_after
    }

    /// True when the call stopped because a retry budget refused another attempt: the service
    /// is failing broadly and retries would only add load.
    pub fn is_retry_budget_exhausted(&self) -> bool {
        self.inner.retry_budget_exhausted
    }

    /// The error's kind as `error.type` names it in metrics and spans.
    pub(crate) fn kind_label(&self) -> &'static str {
        self.inner.kind.label()
    }

    /// True for a non-2xx response turned into an error by the default `ErrorDecoder`.
    pub fn is_status(&self) -> bool {
        self.inner.kind == Kind::Status
    }

    /// True when a connect, read or total timeout fired.
    pub fn is_timeout(&self) -> bool {
        self.inner.kind == Kind::Timeout
    }

    /// True when no connection could be made: nothing was sent.
    pub fn is_connect(&self) -> bool {
        self.inner.kind == Kind::Connect
    }

    /// True when the body could not be decoded.
    pub fn is_decode(&self) -> bool {
        self.inner.kind == Kind::Decode
    }

    /// True when the response body could not be read, was truncated or was too large.
    pub fn is_body(&self) -> bool {
        matches!(self.inner.kind, Kind::Body | Kind::BodyTooLarge)
    }

    /// True when the response body was over the client's size limit.
    pub fn is_too_large(&self) -> bool {
        self.inner.kind == Kind::BodyTooLarge
    }

    /// True for a configuration error reported by `build()`.
    pub fn is_builder(&self) -> bool {
        self.inner.kind == Kind::Builder
    }

    /// True when `Builder::config` (of feign-core or feign-lb) could not bind a property: an
    /// unknown key or a bad value. The `feign_config::ConfigError` naming the key and its file
    /// is the [`source`](std::error::Error::source), also reached with
    /// [`Error::downcast_ref`].
    pub fn is_config(&self) -> bool {
        self.inner.kind == Kind::Config
    }

    /// True when an argument could not be turned into a request; nothing was sent.
    pub fn is_request(&self) -> bool {
        self.inner.kind == Kind::Request
    }

    /// True when the resolver had no instance to call.
    pub fn is_no_instance(&self) -> bool {
        self.inner.kind == Kind::NoInstance
    }

    /// True when the transport failed after the request may have been sent.
    pub fn is_transport(&self) -> bool {
        self.inner.kind == Kind::Transport
    }

    /// True when an interceptor refused the request.
    pub fn is_interceptor(&self) -> bool {
        self.inner.kind == Kind::Interceptor
    }

    /// True for an error made with [`Error::custom`].
    pub fn is_custom(&self) -> bool {
        self.inner.kind == Kind::Custom
    }

    /// True when an open circuit breaker refused the call before any network I/O; the message
    /// names the breaker.
    pub fn is_circuit_open(&self) -> bool {
        self.inner.kind == Kind::CircuitOpen
    }

    /// True when the bulkhead had no free slot for the call, or the client was at its adaptive
    /// concurrency limit (no network I/O took place); the message names the client and says
    /// which.
    pub fn is_bulkhead_full(&self) -> bool {
        self.inner.kind == Kind::BulkheadFull
    }

    /// The user's error inside an [`Error::custom`] (or any source of type `E`).
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.inner
            .source
            .as_ref()
            .and_then(|s| s.downcast_ref::<E>())
    }
}

/// What follows the breaker's name in [`Error::circuit_open`]'s message.
const CIRCUIT_OPEN_SUFFIX: &str = " does not permit calls";

/// Whether `message`, a [`Error::circuit_open`] message, names the breaker `name`.
fn names_breaker(message: &str, name: &str) -> bool {
    message
        .strip_suffix(CIRCUIT_OPEN_SUFFIX)
        .and_then(|quoted| quoted.strip_prefix('`'))
        .and_then(|quoted| quoted.strip_suffix('`'))
        == Some(name)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &*self.inner;
        match (inner.kind, inner.message.is_empty(), inner.status) {
            (Kind::Status, _, Some(status)) => write!(f, "{} {status}", inner.kind.describe())?,
            (Kind::Custom | Kind::Config, true, _) => match &inner.source {
                Some(source) => write!(f, "{source}")?,
                None => f.write_str(inner.kind.describe())?,
            },
            (kind, true, _) => f.write_str(kind.describe())?,
            (kind, false, _) => write!(f, "{}: {}", kind.describe(), inner.message)?,
        }
        if let Some(key) = inner.method_key {
            // A per-method breaker is named after the method: its message names it already.
            if !(inner.kind == Kind::CircuitOpen && names_breaker(&inner.message, key)) {
                write!(f, " in {key}")?;
            }
        }
        if let Some(url) = &inner.url {
            write!(f, " ({url})")?;
        }
        if inner.retry_budget_exhausted {
            f.write_str("; not retried: retry budget exhausted")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &*self.inner;
        let mut d = f.debug_struct("feign_core::Error");
        d.field("kind", &inner.kind);
        if !inner.message.is_empty() {
            d.field("message", &inner.message);
        }
        if let Some(key) = inner.method_key {
            d.field("method_key", &key);
        }
        if let Some(url) = &inner.url {
            d.field("url", url);
        }
        if let Some(status) = inner.status {
            d.field("status", &status);
        }
        if let Some(headers) = &inner.headers {
            d.field("headers", &crate::redact::headers(headers));
        }
        if let Some(body) = &inner.body {
            d.field("body_len", &body.len());
        }
        if let Some(delay) = inner.retry_after {
            d.field("retry_after", &delay);
        }
        if inner.retry_budget_exhausted {
            d.field("retry_budget_exhausted", &true);
        }
        if let Some(source) = &inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_ref()
            .map(|s| &**s as &(dyn std::error::Error + 'static))
    }
}

/// A property `Builder::config` could not bind; shown as the `ConfigError` shows itself, which
/// stays the source.
#[cfg(feature = "config")]
impl From<feign_config::ConfigError> for Error {
    fn from(error: feign_config::ConfigError) -> Self {
        Error::new(Kind::Config, "").with_source(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_breaker_is_named_once() {
        let per_method = Error::circuit_open("Stock#stock").with_method_key("Stock#stock");
        assert_eq!(
            per_method.to_string(),
            "circuit breaker open: `Stock#stock` does not permit calls"
        );
        let per_client = Error::circuit_open("stock").with_method_key("Stock#stock");
        assert_eq!(
            per_client.to_string(),
            "circuit breaker open: `stock` does not permit calls in Stock#stock"
        );
    }

    #[cfg(feature = "config")]
    #[test]
    fn a_config_error_keeps_its_source() {
        use std::error::Error as _;

        let config = feign_config::Config::from_yaml_str("a: [", "application.yml");
        let cause = config.unwrap_err();
        let shown = cause.to_string();
        let error = Error::from(cause);
        assert!(error.is_config() && !error.is_builder());
        assert_eq!(error.to_string(), shown);
        assert!(error.source().is_some());
        assert!(error.downcast_ref::<feign_config::ConfigError>().is_some());
    }

    #[test]
    fn each_kind_has_its_error_type_label() {
        assert_eq!(Error::timeout("late").kind_label(), "timeout");
        assert_eq!(
            Error::new(Kind::BodyTooLarge, "big").kind_label(),
            "body_too_large"
        );
        assert_eq!(Error::new(Kind::Body, "cut").kind_label(), "body");
        assert_eq!(Error::new(Kind::CircuitOpen, "open").kind_label(), "_OTHER");
    }
}
