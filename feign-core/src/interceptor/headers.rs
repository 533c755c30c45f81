//! Ready-made header interceptors.

use async_trait::async_trait;
use http::header::{HeaderName, HeaderValue};

use super::{RequestInterceptor, RequestTemplate};
use crate::Error;

/// Adds fixed headers to every request that does not already carry them.
#[derive(Debug, Clone, Default)]
pub struct DefaultHeaders {
    headers: Vec<(HeaderName, HeaderValue)>,
    invalid: Option<String>,
}

impl DefaultHeaders {
    /// No headers yet.
    pub fn new() -> Self {
        DefaultHeaders::default()
    }

    /// Adds a header. An invalid name or value makes every call fail with an interceptor
    /// error naming the header, before anything is sent.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let parsed = crate::headers::name(name)
            .filter(|n| !crate::headers::is_forbidden(n))
            .zip(
                Some(value)
                    .filter(|v| crate::headers::is_clean_value(v.as_bytes()))
                    .and_then(|v| HeaderValue::try_from(v).ok()),
            );
        match parsed {
            Some(pair) => self.headers.push(pair),
            None => {
                self.invalid = Some(
                    name.chars()
                        .filter(char::is_ascii_graphic)
                        .take(64)
                        .collect(),
                );
            }
        }
        self
    }
}

#[async_trait]
impl RequestInterceptor for DefaultHeaders {
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error> {
        if let Some(name) = &self.invalid {
            return Err(Error::interceptor(format!(
                "default header `{name}` is invalid"
            )));
        }
        for (name, value) in &self.headers {
            if !request.headers.contains_key(name) {
                request.headers.insert(name.clone(), value.clone());
            }
        }
        Ok(())
    }
}

/// Gives every call a random request id header (`X-Request-Id` by default) unless it already
/// has one; retries of the call reuse it.
#[derive(Debug, Clone)]
pub struct RequestId {
    name: HeaderName,
}

impl Default for RequestId {
    fn default() -> Self {
        RequestId {
            name: HeaderName::from_static("x-request-id"),
        }
    }
}

impl RequestId {
    /// Sets `X-Request-Id`.
    pub fn new() -> Self {
        RequestId::default()
    }

    /// Sets the header `name` instead (e.g. `Idempotency-Key`); an invalid name, or one only
    /// the transport sets (`Host`, `Content-Length`…), is an error here rather than on every
    /// call.
    pub fn with_header(name: &str) -> Result<Self, Error> {
        let name = crate::headers::name(name)
            .filter(|name| !crate::headers::is_forbidden(name))
            .ok_or_else(|| Error::builder("invalid request id header name"))?;
        Ok(RequestId { name })
    }
}

#[async_trait]
impl RequestInterceptor for RequestId {
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error> {
        if !request.headers.contains_key(&self.name) {
            let id: u128 = rand::random();
            let text = format!("{id:032x}");
            let value = HeaderValue::try_from(text)
                .map_err(|_| Error::interceptor("request id is not a header value"))?;
            request.headers.insert(self.name.clone(), value);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_id_header_is_a_token_the_transport_does_not_own() {
        assert!(RequestId::with_header("Idempotency-Key").is_ok());
        for name in [
            "host",
            "Content-Length",
            "TRANSFER-ENCODING",
            "Bad Name",
            "",
        ] {
            assert!(RequestId::with_header(name).is_err(), "{name}");
        }
    }
}
