//! A decoded body with the status and headers it came with (Spring's `ResponseEntity<T>`).

use std::fmt;

use http::{HeaderMap, StatusCode};

/// A response body decoded into `T`, with the status and headers of the response.
///
/// Declare a method returning `Result<ResponseEntity<T>, Error>` (or
/// `Result<Option<ResponseEntity<T>>, Error>`, where a 404 is `None`): the body is decoded
/// as `T` would be alone (`()`, `String` and `Bytes` as they are, anything else through the
/// client's [`Decoder`](crate::Decoder)), and a non-2xx still goes to the
/// [`ErrorDecoder`](crate::ErrorDecoder).
#[derive(Clone, PartialEq, Eq)]
pub struct ResponseEntity<T> {
    status: StatusCode,
    headers: HeaderMap,
    body: T,
}

impl<T> ResponseEntity<T> {
    /// An entity from its parts.
    pub fn new(status: StatusCode, headers: HeaderMap, body: T) -> ResponseEntity<T> {
        ResponseEntity {
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

    /// The decoded body.
    pub fn body(&self) -> &T {
        &self.body
    }

    /// The decoded body, consuming the entity.
    pub fn into_body(self) -> T {
        self.body
    }

    /// Status, headers and decoded body, consuming the entity.
    pub fn into_parts(self) -> (StatusCode, HeaderMap, T) {
        (self.status, self.headers, self.body)
    }

    /// The same status and headers around `f(body)`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> ResponseEntity<U> {
        ResponseEntity::new(self.status, self.headers, f(self.body))
    }
}

impl<T: fmt::Debug> fmt::Debug for ResponseEntity<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseEntity")
            .field("status", &self.status)
            .field("headers", &crate::redact::headers(&self.headers))
            .field("body", &self.body)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_head_through_map_and_redacts_secrets_in_debug() {
        let mut headers = HeaderMap::new();
        headers.insert("set-cookie", "session=s3cr3t".parse().unwrap());
        headers.insert("x-total", "3".parse().unwrap());
        let entity = ResponseEntity::new(StatusCode::CREATED, headers, "12").map(|body| body.len());
        assert_eq!(entity.status(), StatusCode::CREATED);
        assert_eq!(entity.headers()["x-total"], "3");
        assert_eq!(*entity.body(), 2);
        let debug = format!("{entity:?}");
        assert!(
            !debug.contains("s3cr3t") && debug.contains("x-total"),
            "{debug}"
        );
        assert_eq!(entity.into_parts().2, 2);
    }
}
