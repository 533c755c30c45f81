//! A request as a recording server received it.

use std::fmt;

use bytes::Bytes;
use http::{HeaderMap, Method};
use serde::de::DeserializeOwned;

use crate::shown::BodyShown;

/// One request as the server received it: nothing normalized, nothing dropped.
///
/// `Debug` and `Display` show it the way feign-core's logs would: the values of
/// `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie` and of query parameters
/// named like credentials are `***`. The fields and accessors give the real values, for
/// assertions.
#[derive(Clone)]
#[non_exhaustive]
pub struct RecordedRequest {
    /// The request method.
    pub method: Method,
    /// The request target exactly as sent: the path and the query, still percent-encoded.
    pub target: String,
    /// The path as sent, still percent-encoded.
    pub path: String,
    /// The query as sent, still percent-encoded; `None` when the target had no `?`.
    pub query: Option<String>,
    /// Every header received, in order, repeated names kept.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
    /// When it arrived, on tokio's clock (virtual time in tests that pause it).
    pub at: tokio::time::Instant,
}

impl RecordedRequest {
    /// The record of a request whose head is `parts` and whose body was `body`, arriving now:
    /// for servers of one's own that keep a [`Recording`](crate::Recording).
    pub fn from_parts(parts: &http::request::Parts, body: Bytes) -> RecordedRequest {
        let uri = &parts.uri;
        RecordedRequest {
            method: parts.method.clone(),
            target: uri
                .path_and_query()
                .map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned()),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            headers: parts.headers.clone(),
            body,
            at: tokio::time::Instant::now(),
        }
    }

    /// Whether this is a `method` request whose path starts with `path_prefix`.
    pub fn is(&self, method: &str, path_prefix: &str) -> bool {
        self.method.as_str() == method && self.path.starts_with(path_prefix)
    }

    /// The query pairs in order, percent-decoded (and `+` read as a space) the way servers
    /// decode a query. Never fails: bytes that are not UTF-8 become U+FFFD.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        url::form_urlencoded::parse(self.query.as_deref().unwrap_or("").as_bytes())
            .into_owned()
            .collect()
    }

    /// The decoded value of the first query parameter `name`, if any.
    pub fn query_value(&self, name: &str) -> Option<String> {
        self.query_pairs()
            .into_iter()
            .find_map(|(key, value)| (key == name).then_some(value))
    }

    /// Every decoded value of the query parameter `name`, in order.
    pub fn query_values(&self, name: &str) -> Vec<String> {
        self.query_pairs()
            .into_iter()
            .filter_map(|(key, value)| (key == name).then_some(value))
            .collect()
    }

    /// The first value of header `name` (any case), if there is one and it is UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Every value of header `name` (any case) that is UTF-8, in order.
    pub fn header_values(&self, name: &str) -> Vec<&str> {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect()
    }

    /// The body as UTF-8 text.
    pub fn text(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.body)
    }

    /// The body read as JSON into `T`.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }
}

/// `GET /orders?token=***`: the method and the target, credentials hidden.
impl fmt::Display for RecordedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}",
            self.method,
            feign_core::redact::url(&self.target)
        )
    }
}

impl fmt::Debug for RecordedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordedRequest")
            .field("method", &self.method)
            .field("target", &feign_core::redact::url(&self.target))
            .field("headers", &feign_core::redact::headers(&self.headers))
            .field("body", &BodyShown(&self.body))
            .finish_non_exhaustive()
    }
}
