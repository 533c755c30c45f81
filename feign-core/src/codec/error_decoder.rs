//! Turning non-2xx responses into errors.

use std::time::{Duration, SystemTime};

use http::header::RETRY_AFTER;
use http::HeaderMap;

use crate::{Error, Response};

/// Turns a response whose status is not 2xx (nor a 404 mapped to `None`) into the error the
/// caller gets. Return [`Error::custom`] with your own type to hand callers a typed error.
///
/// Synchronous (the body is already read), so no future is boxed; object-safe so clients hold
/// an `Arc<dyn ErrorDecoder>`.
///
/// The error responses a decoder expects, for the client's OpenAPI document (feature
/// `openapi`), are declared by implementing `openapi::DeclaresResponses` on the same type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an error decoder",
    note = "implement `feign_core::ErrorDecoder`, or wrap a closure with `feign_core::codec::error_decoder_fn`"
)]
pub trait ErrorDecoder: Send + Sync + 'static {
    /// Makes the error for `response` of the call `method_key`.
    fn decode(&self, method_key: &str, response: Response) -> Error;
}

/// Keeps status, headers and at most 8 KiB of body, and parses `Retry-After`.
#[derive(Debug, Clone, Copy)]
pub struct DefaultErrorDecoder {
    max_body: usize,
}

impl Default for DefaultErrorDecoder {
    fn default() -> Self {
        DefaultErrorDecoder { max_body: 8 * 1024 }
    }
}

impl DefaultErrorDecoder {
    /// Keeps at most `max_body` bytes of body (default 8 KiB).
    pub fn max_body(mut self, max_body: usize) -> Self {
        self.max_body = max_body;
        self
    }
}

impl ErrorDecoder for DefaultErrorDecoder {
    fn decode(&self, _method_key: &str, response: Response) -> Error {
        let (status, headers, mut body) = response.into_parts();
        body.truncate(self.max_body);
        let retry_after = parse_retry_after(&headers, SystemTime::now());
        let err = Error::status_error(status, headers, body);
        match retry_after {
            Some(delay) => err.with_retry_after(delay),
            None => err,
        }
    }
}

/// Reads `Retry-After` as delay-seconds or an HTTP date after `now`; anything else (negative,
/// garbage, a date in the past) is ignored.
pub fn parse_retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(text.parse().unwrap_or(u64::MAX)));
    }
    let when = httpdate::parse_http_date(text).ok()?;
    when.duration_since(now).ok().filter(|d| !d.is_zero())
}

/// Makes an [`ErrorDecoder`] of a closure.
pub fn error_decoder_fn<F>(f: F) -> FnErrorDecoder<F>
where
    F: Fn(&str, Response) -> Error + Send + Sync + 'static,
{
    FnErrorDecoder(f)
}

/// An [`ErrorDecoder`] made by [`error_decoder_fn`].
#[derive(Clone)]
pub struct FnErrorDecoder<F>(F);

impl<F> ErrorDecoder for FnErrorDecoder<F>
where
    F: Fn(&str, Response) -> Error + Send + Sync + 'static,
{
    fn decode(&self, method_key: &str, response: Response) -> Error {
        (self.0)(method_key, response)
    }
}

impl<F> std::fmt::Debug for FnErrorDecoder<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnErrorDecoder")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with(value: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        map
    }

    #[test]
    fn retry_after_seconds_dates_and_garbage() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            parse_retry_after(&with("120"), now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(&with("-1"), now), None);
        assert_eq!(parse_retry_after(&with("banana"), now), None);
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            parse_retry_after(&with(&later), now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&with(&earlier), now), None);
        assert_eq!(parse_retry_after(&HeaderMap::new(), now), None);
    }
}
