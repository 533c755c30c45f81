//! HTTP basic authentication for the whole registry (the Eureka API and the dashboard), as a
//! Spring Cloud Netflix server behind Spring Security's basic auth answers: 401 with
//! `WWW-Authenticate: Basic realm="Realm"` to a request without the credentials.

use std::fmt;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use feign_core::Credentials;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use subtle::ConstantTimeEq;

use feign_core::clock::Clock;

/// The one `Authorization` value the registry accepts.
pub(crate) struct BasicAuth {
    expected: Box<[u8]>,
}

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BasicAuth(***)")
    }
}

impl BasicAuth {
    /// Accepts `credentials`; `None` when they cannot be sent in a header (control characters).
    pub(crate) fn new(credentials: &Credentials) -> Option<BasicAuth> {
        let value = credentials.basic_authorization()?;
        Some(BasicAuth {
            expected: value.as_bytes().into(),
        })
    }

    /// Whether `headers` carry the credentials. The comparison takes the same time wherever the
    /// first difference lies, so the password cannot be guessed byte by byte from timings.
    pub(crate) fn admits(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::AUTHORIZATION)
            .is_some_and(|value| bool::from(value.as_bytes().ct_eq(&self.expected)))
    }
}

/// What [`require`] checks requests with: the credentials, when the registry has them, and the
/// clock its error bodies are stamped by.
pub(crate) struct Gate {
    pub(crate) basic: Option<BasicAuth>,
    pub(crate) clock: Clock,
}

/// Lets a request through only with the registry's credentials, when it has them.
pub(crate) async fn require(
    State(gate): State<Arc<Gate>>,
    request: Request,
    next: Next,
) -> Response {
    match &gate.basic {
        Some(auth) if !auth.admits(request.headers()) => {
            let mut response = crate::answer::error_body(
                StatusCode::UNAUTHORIZED,
                request.uri().path(),
                gate.clock.now_ms(),
            );
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"Realm\""),
            );
            response
        }
        _ => next.run(request).await,
    }
}
