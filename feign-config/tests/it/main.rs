//! feign-config's integration tests, one binary, in the layout the other crates share.

mod documents;
mod live;
mod namespaces;
mod props;
mod sources;
