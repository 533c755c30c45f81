//! The error responses a client's error decoder expects: [`DeclaresResponses`] and the
//! [`ErrorResponse`]s it returns.

use std::fmt;

use http::StatusCode;
use schemars::JsonSchema;

use crate::schema::{SchemaFn, SchemaOf, ViaJsonSchema};

/// What a client's error decoder declares for the document: the error responses it expects
/// from each method, which [`OpenApi::error_decoder`](crate::OpenApi::error_decoder) lists
/// under the method's operation. Implement it on the type that implements feign-core's
/// `ErrorDecoder`, beside its `decode`.
///
/// ```
/// use feign_openapi::{DeclaresResponses, ErrorResponse};
///
/// #[derive(schemars::JsonSchema)]
/// struct Problem { title: String, status: u16 }
///
/// /// The client's error decoder (its `feign_core::ErrorDecoder` impl is elsewhere).
/// struct OrderErrors;
///
/// impl DeclaresResponses for OrderErrors {
///     fn declared_responses(&self, method_key: &str) -> Vec<ErrorResponse> {
///         let mut declared = vec![ErrorResponse::server_errors("the service failed; retried")];
///         if method_key == "OrderService#create" {
///             declared.push(ErrorResponse::client_errors("the order was refused").json::<Problem>());
///         }
///         declared
///     }
/// }
/// # assert_eq!(OrderErrors.declared_responses("OrderService#create").len(), 2);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no error responses",
    note = "implement `feign_openapi::DeclaresResponses` (also `feign_core::openapi::DeclaresResponses`) for it"
)]
pub trait DeclaresResponses {
    /// The error responses expected from the call `method_key` (`Trait#method`, as
    /// `ErrorDecoder::decode` gets it).
    fn declared_responses(&self, method_key: &str) -> Vec<ErrorResponse>;
}

/// A response an error decoder expects and turns into an error: its status (or a class of
/// statuses), a description and, optionally, its body's schema. Returned by
/// [`DeclaresResponses::declared_responses`] and listed under each operation's `responses`.
///
/// ```
/// use feign_openapi::ErrorResponse;
/// use http::StatusCode;
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
