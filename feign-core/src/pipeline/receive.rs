//! What an attempt makes of a response: the body read whole ([`Response`]), or a 2xx body left
//! streaming ([`StreamingResponse`]). The attempts, retries and observers are the same for both,
//! and so are the layers: a streaming body passes them inside a [`Response`] that carries the
//! head.

use std::time::Duration;

use http::response::Parts;
use http::{HeaderMap, StatusCode};

use crate::client::ResponseBody;
use crate::{Error, Response, StreamingResponse};

/// A response as a call receives it. Implemented for [`Response`] and [`StreamingResponse`]
/// only.
///
/// `Err` is not a failure in these signatures but the other way of reading: clippy's size lint
/// for error types does not apply, and boxing would cost an allocation per call.
#[allow(clippy::result_large_err)]
pub trait Receive: Sized + Send + 'static {
    /// Whether a 2xx body is left streaming.
    #[doc(hidden)]
    const STREAMS: bool;

    /// A 2xx response's head and body, kept streaming with `read_timeout` between chunks, or
    /// given back to be read whole.
    #[doc(hidden)]
    fn stream(
        parts: Parts,
        body: ResponseBody,
        read_timeout: Duration,
        key: &'static str,
    ) -> Result<Self, (Parts, ResponseBody)>;

    /// A response read whole.
    #[doc(hidden)]
    fn whole(response: Response) -> Self;

    /// The status code.
    #[doc(hidden)]
    fn status(&self) -> StatusCode;

    /// The response headers.
    #[doc(hidden)]
    fn headers(&self) -> &HeaderMap;

    /// The response with its body in memory, for the ErrorDecoder and response interceptors;
    /// `Err` gives back one whose body streams (never a non-2xx, which is always read whole).
    #[doc(hidden)]
    fn into_whole(self) -> Result<Response, Self>;

    /// The response as the layers see it.
    #[doc(hidden)]
    fn into_layered(self) -> Response;

    /// The response the layers answered, as the call receives it.
    #[doc(hidden)]
    fn from_layered(response: Response) -> Result<Self, Error>;
}

#[allow(clippy::result_large_err)]
impl Receive for Response {
    const STREAMS: bool = false;

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

    fn into_layered(self) -> Response {
        self
    }

    fn from_layered(response: Response) -> Result<Self, Error> {
        match response.take_streaming()? {
            Err(whole) => Ok(whole),
            Ok(_) => Err(Error::request(
                "a layer answered with a streaming response for a method that reads its body whole",
            )),
        }
    }
}

#[allow(clippy::result_large_err)]
impl Receive for StreamingResponse {
    const STREAMS: bool = true;

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

    fn into_layered(self) -> Response {
        match self.into_whole() {
            Ok(whole) => whole,
            Err(streaming) => Response::streaming_head(streaming),
        }
    }

    fn from_layered(response: Response) -> Result<Self, Error> {
        Ok(match response.take_streaming()? {
            Ok(streaming) => streaming,
            Err(whole) => Self::whole(whole),
        })
    }
}
