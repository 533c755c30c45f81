//! OpenAPI documents of clients (feature `openapi`).
//!
//! `{Trait}Client::openapi()` returns the [`OpenApi`] document of the trait: an OpenAPI 3.1
//! description of what the client sends and expects. Each method is an operation at its
//! template's path (the client's `path` prefix included), its `#[path]`, `#[query]`,
//! `#[query_map]`, `#[header]` and `#[headers("Name: {var}")]` arguments are parameters, its
//! `#[body]`, `#[form]` or `#[part]`s the request body, and its return type the 2xx response
//! (`()` is a `204`; `Option<T>` adds a `404`). A type that implements
//! [`schemars::JsonSchema`] is described by its JSON Schema 2020-12, named types under
//! `components/schemas`; any other type gets an open schema that names it. The responses an
//! [`ErrorDecoder`] declares are added with [`OpenApi::error_decoder`].
//!
//! [`compare`] holds the document against the spec a server publishes and lists every
//! [`Mismatch`]: an operation the server does not have, a parameter it does not take or takes
//! elsewhere, of another type, or required where the client may leave it out, and bodies whose
//! schemas disagree where the client writes or reads them.
//!
//! ```
//! use feign_core::{feign_client, Error};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! pub struct Order { pub id: u64, pub item: String }
//!
//! #[feign_client("order-service", path = "/api")]
//! pub trait OrderService {
//!     /// One order.
//!     #[get("/orders/{id}")]
//!     async fn get_order(&self, #[path] id: u64) -> Result<Option<Order>, Error>;
//! }
//!
//! let document = OrderServiceClient::openapi().version("1.4.0").to_json();
//! assert_eq!(document["paths"]["/api/orders/{id}"]["get"]["operationId"], "get_order");
//! let server = document.clone(); // the server's published spec, in practice
//! assert!(feign_core::openapi::compare(&document, &server)?.is_empty());
//! # Ok::<(), feign_core::openapi::SpecError>(())
//! ```

mod compare;
mod document;
pub(crate) mod operation;
mod path;
mod response;
pub(crate) mod schema;

use std::fmt;

use crate::meta::ClientMeta;
use crate::ErrorDecoder;

pub use compare::{compare, Mismatch, MismatchKind, SpecError};
pub use response::ErrorResponse;

use operation::Operation;

/// The OpenAPI 3.1 document of a client's trait, made by the generated
/// `{Trait}Client::openapi()`. Schemas are generated when it is rendered
/// ([`to_json`](OpenApi::to_json), [`to_string_pretty`](OpenApi::to_string_pretty)).
pub struct OpenApi {
    title: String,
    version: String,
    description: String,
    server: Option<String>,
    operations: Vec<(Operation, Vec<ErrorResponse>)>,
}

impl OpenApi {
    /// The document of `client`'s operations: titled by its service name, at `version` (the
    /// crate's that declared the trait), described by the trait's doc comment, with its fixed
    /// URL as the server when it has one.
    #[doc(hidden)]
    pub fn new(
        client: &ClientMeta,
        version: Option<&str>,
        description: &str,
        operations: Vec<Operation>,
    ) -> Self {
        OpenApi {
            title: client.service.to_owned(),
            version: version.unwrap_or("0.0.0").to_owned(),
            description: description.trim().to_owned(),
            server: client.url.map(str::to_owned),
            operations: operations
                .into_iter()
                .map(|operation| (operation, Vec::new()))
                .collect(),
        }
    }

    /// The document's `info.title` (default: the service name).
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// The document's `info.version` (default: the version of the crate declaring the trait).
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// The server URL (default: the client's `url = "..."`, else none).
    #[must_use]
    pub fn server(mut self, url: impl Into<String>) -> Self {
        self.server = Some(url.into());
        self
    }

    /// Adds to each operation the responses `decoder` declares for its method
    /// ([`ErrorDecoder::declared_responses`]); a status the operation already lists keeps its
    /// first description.
    #[must_use]
    pub fn error_decoder(mut self, decoder: &dyn ErrorDecoder) -> Self {
        for (operation, errors) in &mut self.operations {
            errors.extend(decoder.declared_responses(operation.key));
        }
        self
    }

    /// The document as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        document::render(self)
    }

    /// The document as indented JSON text.
    pub fn to_string_pretty(&self) -> String {
        // A `Value` always serializes.
        serde_json::to_string_pretty(&self.to_json()).unwrap_or_default()
    }
}

impl fmt::Debug for OpenApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenApi")
            .field("title", &self.title)
            .field("version", &self.version)
            .field("operations", &self.operations.len())
            .finish()
    }
}
