//! [`OpenApi`]: the document of a client, as generated code makes it and users adjust it;
//! `render.rs` writes it as JSON.

mod render;

use std::fmt;

use crate::operation::Operation;
use crate::response::{DeclaresResponses, ErrorResponse};

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
    /// The document of a client's operations: titled by its `service` name, at `version` (the
    /// crate's that declared the trait), described by the trait's doc comment, with its fixed
    /// `url` as the server when it has one.
    #[doc(hidden)]
    pub fn new(
        service: &str,
        url: Option<&str>,
        version: Option<&str>,
        description: &str,
        operations: Vec<Operation>,
    ) -> Self {
        OpenApi {
            title: service.to_owned(),
            version: version.unwrap_or("0.0.0").to_owned(),
            description: description.trim().to_owned(),
            server: url.map(str::to_owned),
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
    /// ([`DeclaresResponses::declared_responses`]); a status the operation already lists keeps
    /// its first description.
    ///
    /// An error decoder that does not implement [`DeclaresResponses`] declares nothing, and is
    /// refused here:
    ///
    /// ```compile_fail,E0277
    /// use feign_core::{feign_client, Error};
    /// use feign_core::codec::DefaultErrorDecoder;
    ///
    /// #[feign_client("order-service")]
    /// pub trait OrderService {
    ///     #[get("/orders/{id}")]
    ///     async fn get_order(&self, #[path] id: u64) -> Result<String, Error>;
    /// }
    ///
    /// let document = OrderServiceClient::openapi().error_decoder(&DefaultErrorDecoder::default());
    /// ```
    #[must_use]
    pub fn error_decoder(mut self, decoder: &dyn DeclaresResponses) -> Self {
        for (operation, errors) in &mut self.operations {
            errors.extend(decoder.declared_responses(operation.key));
        }
        self
    }

    /// The document as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        render::render(self)
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
