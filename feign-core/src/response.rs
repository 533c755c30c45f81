//! A response as the pipeline received it: status, headers and the whole (capped) body.

use std::fmt;

use bytes::Bytes;
use http::{HeaderMap, StatusCode};

/// An HTTP response whose body has been read in full, within the client's size limit.
///
/// Declare a method returning `Result<Response, Error>` to get it as is; decoders and error
/// decoders see it too. For a body read as it arrives, without the size limit, return a
/// [`StreamingResponse`](crate::StreamingResponse); for a decoded body with its status and
/// headers, a [`ResponseEntity<T>`](crate::ResponseEntity).
#[derive(Clone)]
pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Response {
    /// A response from its parts.
    pub fn new(status: StatusCode, headers: HeaderMap, body: Bytes) -> Response {
        Response {
            status,
            headers,
            body,
        }
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The body, consuming the response.
    pub fn into_body(self) -> Bytes {
        self.body
    }

    /// Status, headers and body, consuming the response.
    pub fn into_parts(self) -> (StatusCode, HeaderMap, Bytes) {
        (self.status, self.headers, self.body)
    }

    /// The body as UTF-8 text; invalid UTF-8 is a decode error.
    pub fn text(&self) -> Result<&str, crate::Error> {
        std::str::from_utf8(&self.body).map_err(crate::Error::decode)
    }

    /// The body parsed as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, crate::Error> {
        serde_json::from_slice(&self.body).map_err(crate::Error::decode)
    }
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &crate::redact::headers(&self.headers))
            .field("body_len", &self.body.len())
            .finish()
    }
}
