//! The request as interceptors see it.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::{HeaderMap, Method};

use crate::body::OneShot;
use crate::meta::MethodMeta;
use crate::Error;

/// A request about to be sent, open to change by interceptors.
///
/// The URL is the path and query, relative to the target chosen for each attempt (a fixed URL
/// or a load-balanced instance), so interceptors cannot redirect calls to another host.
pub struct RequestTemplate {
    pub(crate) method: Method,
    pub(crate) path_and_query: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    /// A streamed body, sent in place of `body` (then empty).
    pub(crate) stream: Option<Arc<OneShot>>,
    pub(crate) meta: &'static MethodMeta,
    pub(crate) service: &'static str,
}

impl RequestTemplate {
    /// The method key, `Trait#method`, e.g. `OrderService#get_order`.
    pub fn method_key(&self) -> &'static str {
        self.meta.key
    }

    /// The Rust name of the client method.
    pub fn method_name(&self) -> &'static str {
        self.meta.name
    }

    /// The unexpanded route, e.g. `GET /orders/{id}`: a low-cardinality label for metrics.
    pub fn route(&self) -> &'static str {
        self.meta.route
    }

    /// The service name the client was declared with.
    pub fn service(&self) -> &'static str {
        self.service
    }

    /// The HTTP method.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// Replaces the HTTP method.
    pub fn set_method(&mut self, method: Method) {
        self.method = method;
    }

    /// The path and query, percent-encoded, e.g. `/api/orders/42?page-size=10`.
    pub fn path_and_query(&self) -> &str {
        &self.path_and_query
    }

    /// Replaces the path and query; it must start with `/` and be a valid request target
    /// (already percent-encoded).
    pub fn set_path_and_query(&mut self, path_and_query: impl Into<String>) -> Result<(), Error> {
        let value = path_and_query.into();
        if !value.starts_with('/') || http::uri::PathAndQuery::try_from(value.as_str()).is_err() {
            return Err(Error::interceptor(
                "path and query must start with `/` and be a valid request target",
            ));
        }
        self.path_and_query = value;
        Ok(())
    }

    /// Appends one query pair, percent-encoding name and value.
    pub fn append_query(&mut self, name: &str, value: &str) {
        let sep = if self.path_and_query.contains('?') {
            '&'
        } else {
            '?'
        };
        self.path_and_query.push(sep);
        crate::escape::push_str(&mut self.path_and_query, name);
        self.path_and_query.push('=');
        crate::escape::push_str(&mut self.path_and_query, value);
    }

    /// The request headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The request headers, to change. Values with `set_sensitive(true)` are redacted in logs.
    pub fn headers_mut(&mut self) -> &mut HeaderMap {
        &mut self.headers
    }

    /// Sets a header, replacing any value it had; name and value are validated.
    pub fn insert_header(&mut self, name: &str, value: &str) -> Result<(), Error> {
        let (name, value) = parse_header(name, value)?;
        self.headers.insert(name, value);
        Ok(())
    }

    /// Sets a header whose value must never be logged or shown (a credential).
    pub fn insert_sensitive_header(&mut self, name: &str, value: &str) -> Result<(), Error> {
        let (name, mut value) = parse_header(name, value)?;
        value.set_sensitive(true);
        self.headers.insert(name, value);
        Ok(())
    }

    /// Marks every value of header `name` as sensitive: redacted in logs, `Debug` and errors.
    pub fn mark_sensitive(&mut self, name: &str) {
        if let Ok(name) = HeaderName::try_from(name) {
            if let http::header::Entry::Occupied(mut entry) = self.headers.entry(name) {
                entry.iter_mut().for_each(|v| v.set_sensitive(true));
            }
        }
    }

    /// The encoded body (empty when the method has none, or when it is
    /// [streamed](RequestTemplate::is_body_streamed)).
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// Replaces the encoded body (a streamed body included).
    pub fn set_body(&mut self, body: impl Into<Bytes>) {
        self.body = body.into();
        self.stream = None;
    }

    /// Whether the body is a stream (a `BodyStream`, a file, a multipart body with a file
    /// part), sent as it is read and never held here: [`body`](RequestTemplate::body) is then
    /// empty.
    pub fn is_body_streamed(&self) -> bool {
        self.stream.is_some()
    }

    /// The length of the body, when known (a stream of unknown length is sent chunked).
    pub fn body_length(&self) -> Option<u64> {
        match &self.stream {
            Some(stream) => stream.length(),
            None => Some(self.body.len() as u64),
        }
    }
}

fn parse_header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), Error> {
    crate::headers::parse(name, Bytes::copy_from_slice(value.as_bytes()))
        .map_err(|refused| refused.into_error(crate::error::Kind::Interceptor))
}

impl fmt::Debug for RequestTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestTemplate")
            .field("method_key", &self.meta.key)
            .field("method", &self.method)
            .field(
                "path_and_query",
                &crate::redact::url(&self.path_and_query).to_string(),
            )
            .field("headers", &crate::redact::headers(&self.headers))
            .field("body_len", &self.body_length())
            .field("body_streamed", &self.stream.is_some())
            .finish()
    }
}
