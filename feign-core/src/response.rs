//! A response as the pipeline received it: status, headers and the whole (capped) body.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::{HeaderMap, StatusCode};

/// An HTTP response whose body has been read in full, within the client's size limit.
///
/// Declare a method returning `Result<Response, Error>` to get it as is; decoders and error
/// decoders see it too. For a body read as it arrives, without the size limit, return a
/// [`StreamingResponse`](crate::StreamingResponse); for a decoded body with its status and
/// headers, a [`ResponseEntity<T>`](crate::ResponseEntity).
///
/// **In a layer** ([`Builder::layer`](crate::Builder::layer)), the response of a method that
/// returns a `StreamingResponse` carries only the head: its 2xx body keeps streaming to the
/// caller after the layers, so [`is_streaming`](Response::is_streaming) is true and
/// [`body`](Response::body) is empty. A layer may change its status and headers; a response it
/// builds itself (a cached one) goes to the caller whole.
#[derive(Clone)]
pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    /// The body still streaming, for a streaming method's 2xx under layers; shared by clones,
    /// taken once.
    streaming: Option<Streaming>,
}

/// The streaming body of a [`Response`] a layer passes on.
#[derive(Clone)]
struct Streaming(Arc<Mutex<Option<crate::StreamingResponse>>>);

impl Response {
    /// A response from its parts.
    pub fn new(status: StatusCode, headers: HeaderMap, body: Bytes) -> Response {
        Response {
            status,
            headers,
            body,
            streaming: None,
        }
    }

    /// The head of `streaming`, its body kept to be taken back after the layers.
    pub(crate) fn streaming_head(streaming: crate::StreamingResponse) -> Response {
        Response {
            status: streaming.status(),
            headers: streaming.headers().clone(),
            body: Bytes::new(),
            streaming: Some(Streaming(Arc::new(Mutex::new(Some(streaming))))),
        }
    }

    /// Whether the body is still streaming (only the head is here; see the type's docs).
    pub fn is_streaming(&self) -> bool {
        self.streaming.is_some()
    }

    /// The streaming body, with this response's status and headers; `Ok(Err(self))` when the
    /// body is whole; an error when another clone took the stream already.
    #[allow(clippy::result_large_err)]
    pub(crate) fn take_streaming(
        self,
    ) -> Result<Result<crate::StreamingResponse, Response>, crate::Error> {
        let Some(Streaming(slot)) = self.streaming else {
            return Ok(Err(self));
        };
        let taken = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
        match taken {
            Some(body) => Ok(Ok(body.with_head(self.status, self.headers))),
            None => Err(crate::Error::request(
                "a layer answered with a streaming response whose body was already taken",
            )),
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
            .field("streaming", &self.is_streaming())
            .finish()
    }
}
