//! What the macro knows of each method, for its operation in the document: written by generated
//! code (through feign-core's `__private::openapi`), read by `document/render.rs`.

use http::Method;

use crate::schema::SchemaFn;

/// One client method.
#[derive(Debug)]
pub struct Operation {
    /// The Rust method name: the operation's `operationId`.
    pub name: &'static str,
    /// `Trait#method`, which an error decoder's declared responses are asked for.
    pub key: &'static str,
    /// The HTTP method.
    pub method: Method,
    /// The client's prefix and the template's path, variables named: `/api/orders/{id}`.
    pub path: &'static str,
    /// Literal query pairs of the template, percent-encoded as sent.
    pub query: &'static [(&'static str, &'static str)],
    /// The method's doc comment.
    pub doc: &'static str,
    /// Path, query and header parameters, in the order of the method's arguments.
    pub params: Vec<Param>,
    /// The request body, when the method sends one.
    pub body: Option<Body>,
    /// The 2xx response.
    pub success: Success,
}

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A `{var}` of the path.
    Path,
    /// A query pair (or, for a `#[query_map]`, one per field).
    Query,
    /// A header.
    Header,
}

impl Location {
    /// The name OpenAPI's `in` gives it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
        }
    }
}

/// A path, query or header parameter.
#[derive(Debug)]
pub struct Param {
    /// The name on the wire.
    pub name: &'static str,
    /// Where it goes.
    pub location: Location,
    /// `false` for an `Option`.
    pub required: bool,
    /// The separator a collection's values are joined with (`#[query(format = ..)]`); `None`:
    /// one pair per value.
    pub separator: Option<&'static str>,
    /// The value's schema (of `T` for an `Option<T>`).
    pub schema: SchemaFn,
}

/// A request body.
#[derive(Debug)]
pub struct Body {
    /// Its media type: `application/json`, `multipart/form-data`...
    pub media: &'static str,
    /// `false` for an `Option`.
    pub required: bool,
    /// Its content.
    pub content: Content,
}

/// What a body holds.
#[derive(Debug)]
pub enum Content {
    /// A value of this schema.
    Schema(SchemaFn),
    /// Multipart parts.
    Parts(Vec<Part>),
}

/// One `#[part]` of a multipart body.
#[derive(Debug)]
pub struct Part {
    /// The part's name.
    pub name: &'static str,
    /// `false` for an `Option`.
    pub required: bool,
    /// The part's schema.
    pub schema: SchemaFn,
}

/// The response a method decodes.
#[derive(Debug)]
pub struct Success {
    /// `200`, or `204` when the body is dropped.
    pub status: u16,
    /// The body's media type and schema; `None`: no body is read.
    pub body: Option<(&'static str, SchemaFn)>,
    /// What the client does with the response, for its description.
    pub description: &'static str,
    /// `Option<T>`: a 404 is `None`.
    pub not_found_is_none: bool,
}
