//! What an attempt makes of a response: the body read whole ([`Response`]), or a 2xx body left
//! streaming ([`StreamingResponse`]). The attempts, retries and observers are the same for both.

use std::time::Duration;

use http::response::Parts;
use http::{HeaderMap, StatusCode};

use crate::client::ResponseBody;
use crate::{Response, StreamingResponse};

/// A response as a call returns it.
///
/// `Err` is not a failure in these signatures but the other way of reading: clippy's size lint
/// for error types does not apply, and boxing would cost an allocation per call.
#[allow(clippy::result_large_err)]
pub(crate) trait Receive: Sized + Send {
    /// A 2xx response's head and body, kept streaming with `read_timeout` between chunks, or
    /// given back to be read whole.
    fn stream(
        parts: Parts,
        body: ResponseBody,
        read_timeout: Duration,
        key: &'static str,
    ) -> Result<Self, (Parts, ResponseBody)>;

    /// A response read whole.
    fn whole(response: Response) -> Self;

    /// The status code.
    fn status(&self) -> StatusCode;

    /// The response headers.
    fn headers(&self) -> &HeaderMap;

    /// The response with its body in memory, for the ErrorDecoder; `Err` gives back one whose
    /// body streams (never a non-2xx, which is always read whole).
    fn into_whole(self) -> Result<Response, Self>;
}

#[allow(clippy::result_large_err)]
impl Receive for Response {
    fn stream(
        parts: Parts,
        body: ResponseBody,
        _read_timeout: Duration,
        _key: &'static str,
    ) -> Result<Self, (Parts, ResponseBody)> {
        Err((parts, body))
    }

    fn whole(response: Response) -> Self {
        response
    }

    fn status(&self) -> StatusCode {
        self.status()
    }

    fn headers(&self) -> &HeaderMap {
        self.headers()
    }

    fn into_whole(self) -> Result<Response, Self> {
        Ok(self)
    }
}

#[allow(clippy::result_large_err)]
impl Receive for StreamingResponse {
    fn stream(
        parts: Parts,
        body: ResponseBody,
        read_timeout: Duration,
        key: &'static str,
    ) -> Result<Self, (Parts, ResponseBody)> {
        Ok(
            StreamingResponse::new(parts.status, parts.headers, body, read_timeout)
                .with_method_key(key),
        )
    }

    fn whole(response: Response) -> Self {
        let (status, headers, body) = response.into_parts();
        StreamingResponse::buffered(status, headers, body)
    }

    fn status(&self) -> StatusCode {
        self.status()
    }

    fn headers(&self) -> &HeaderMap {
        self.headers()
    }

    fn into_whole(self) -> Result<Response, Self> {
        self.into_buffered()
            .map(|(status, headers, body)| Response::new(status, headers, body))
    }
}
