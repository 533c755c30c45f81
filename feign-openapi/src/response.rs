//! The error responses an [`ErrorDecoder`](crate::ErrorDecoder) declares.

use std::fmt;

use http::StatusCode;
use schemars::JsonSchema;

use super::schema::{SchemaFn, SchemaOf, ViaJsonSchema};

/// A response an error decoder expects and turns into an error: its status (or a class of
/// statuses), a description and, optionally, its body's schema. Returned by
/// [`ErrorDecoder::declared_responses`](crate::ErrorDecoder::declared_responses) and listed
/// under each operation's `responses`.
///
/// ```
/// use feign_core::http::StatusCode;
/// use feign_core::openapi::ErrorResponse;
///
/// #[derive(schemars::JsonSchema)]
/// struct Problem { title: String, status: u16 }
///
/// let not_found = ErrorResponse::new(StatusCode::NOT_FOUND, "no such order").json::<Problem>();
/// let unavailable = ErrorResponse::server_errors("the service is down; retried");
/// # let _ = (not_found, unavailable);
/// ```
#[derive(Clone)]
pub struct ErrorResponse {
    pub(crate) status: String,
    pub(crate) description: String,
    pub(crate) body: Option<(String, SchemaFn)>,
}

impl ErrorResponse {
    /// A response of this status.
    pub fn new(status: StatusCode, description: impl Into<String>) -> Self {
        ErrorResponse::with_status(status.as_str().to_owned(), description)
    }

    /// Any 4xx response (`4XX`).
    pub fn client_errors(description: impl Into<String>) -> Self {
        ErrorResponse::with_status("4XX".to_owned(), description)
    }

    /// Any 5xx response (`5XX`).
    pub fn server_errors(description: impl Into<String>) -> Self {
        ErrorResponse::with_status("5XX".to_owned(), description)
    }

    fn with_status(status: String, description: impl Into<String>) -> Self {
        ErrorResponse {
            status,
            description: description.into(),
            body: None,
        }
    }

    /// Its body: `application/json` of `T`'s schema.
    #[must_use]
    pub fn json<T: JsonSchema + ?Sized>(self) -> Self {
        self.body::<T>("application/json")
    }

    /// Its body: `media_type` (`application/problem+json`...) of `T`'s schema.
    #[must_use]
    pub fn body<T: JsonSchema + ?Sized>(mut self, media_type: impl Into<String>) -> Self {
        self.body = Some((media_type.into(), (&&SchemaOf::<T>::new()).schema_fn()));
        self
    }

    /// The status as OpenAPI writes it: `404`, `4XX`.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }
}

impl fmt::Debug for ErrorResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorResponse")
            .field("status", &self.status)
            .field("description", &self.description)
            .field("media_type", &self.body.as_ref().map(|(media, _)| media))
            .finish()
    }
}
