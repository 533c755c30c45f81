//! `{Trait}Client::openapi()` (feature `openapi`): the document of a client, checked against
//! the OpenAPI 3.1 meta-schema, and `openapi::compare` against server specs.

mod compare;
mod document;
