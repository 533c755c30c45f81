//! OpenAPI 3.1 documents of feign-rs clients, and their comparison with the specs servers
//! publish.
//!
//! With feign-core's `openapi` feature, every `#[feign_client]` trait's client gets
//! `{Trait}Client::openapi()`, which returns the [`OpenApi`] document of the trait: what the
//! client sends and expects, as OpenAPI 3.1. This crate comes with that feature and is reached
//! as `feign_core::openapi`; a build without the feature compiles none of it.
//!
//! ```toml
//! [dependencies]
//! feign-core = { version = "0.1", features = ["openapi"] }
//! schemars = { version = "1", features = ["derive"] }
//! ```
//!
//! ## The document
//!
//! Each method is an operation at its template's path (the client's `path` prefix included),
//! named by the method (`operationId`) and summed up by its doc comment. Its `#[path]`,
//! `#[query]`, `#[query_map]`, `#[header]` and `#[headers("Name: {var}")]` arguments are
//! parameters (an `Option` is not required; `format = "csv"` is `explode: false`), its
//! `#[body]`, `#[form]` or `#[part]`s the request body, by media type, and its return type the
//! 2xx response (`()` is a `204`; `Option<T>` adds a `404`). Methods on one path and HTTP method
//! are one operation, listed under `x-feign-methods`.
//!
//! A type that implements [`schemars::JsonSchema`] (schemars 1.x) is described by its JSON
//! Schema 2020-12, named types under `components/schemas`; any other type gets an open schema
//! that names it. The error responses a client's error decoder expects are declared by
//! implementing [`DeclaresResponses`] on it, and added with [`OpenApi::error_decoder`].
//!
//! ## Comparing with a server's spec
//!
//! [`compare`] holds the document against the spec a server publishes (OpenAPI 3.0 or 3.1,
//! springdoc's `/v3/api-docs` for instance) and lists every [`Mismatch`]: an operation the server
//! does not have, a parameter it does not take or takes elsewhere, of another type, or required
//! where the client may leave it out, and bodies whose schemas disagree where the client writes
//! them (parameters, request bodies) or reads them (response bodies). It takes both documents as
//! JSON values (`OpenApi::to_json`, and the server's spec as read).
//!
//! ```
//! use feign_core::{feign_client, Error};
//! use feign_openapi::{compare, DeclaresResponses, ErrorResponse};
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
//! /// The client's error decoder (its `feign_core::ErrorDecoder` impl is elsewhere).
//! struct OrderErrors;
//!
//! impl DeclaresResponses for OrderErrors {
//!     fn declared_responses(&self, _method_key: &str) -> Vec<ErrorResponse> {
//!         vec![ErrorResponse::server_errors("the service failed; retried")]
//!     }
//! }
//!
//! let document = OrderServiceClient::openapi()
//!     .version("1.4.0")
//!     .error_decoder(&OrderErrors)
//!     .to_json();
//! let operation = &document["paths"]["/api/orders/{id}"]["get"];
//! assert_eq!(operation["operationId"], "get_order");
//! assert_eq!(operation["responses"]["5XX"]["description"], "the service failed; retried");
//! let server = document.clone(); // the server's published spec, in practice
//! assert!(compare(&document, &server)?.is_empty());
//! # Ok::<(), feign_openapi::SpecError>(())
//! ```
//!
//! ## Features
//!
//! None: the crate is whole or absent, as feign-core's `openapi` feature says.

mod compare;
mod document;
mod operation;
mod path;
mod response;
mod schema;

pub use compare::{compare, Mismatch, MismatchKind, SpecError};
pub use document::OpenApi;
pub use response::{DeclaresResponses, ErrorResponse};

/// What the generated `{Trait}Client::openapi()` is made of, reached through feign-core's
/// `__private::openapi` (whose docs are the contract with the macro). **Not a stable API.**
#[doc(hidden)]
pub mod __private {
    pub use crate::operation::{Body, Content, Location, Operation, Param, Part, Success};
    pub use crate::schema::{
        binaries, binary, text, unnamed, SchemaFn, SchemaOf, ViaJsonSchema, ViaOpen,
    };
}
