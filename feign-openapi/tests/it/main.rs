//! feign-openapi's integration tests, one binary: the documents of `#[feign_client]` clients
//! (feign-core's feature `openapi`), checked against the OpenAPI 3.1 meta-schema, and `compare`
//! against server specs.

mod compare;
mod document;
