//! feign-core's integration tests, one binary: each module is one concern, talking to real
//! servers on 127.0.0.1 through the hand-written and generated clients of `feign-test-support`.
//!
//! Binaries of their own: `tests/allocations.rs` counts allocations with a global allocator and
//! no harness, so no other test may run beside it; `tests/metrics.rs` installs the process's
//! metrics recorder before any call, as feign-core keeps a method's metric handles from its first
//! call on.
//!
//! The `openapi` tests need the feature of that name: the crate's dev-dependency on itself turns
//! it on, so `cargo test -p feign-core` runs them.

mod around;
mod bearer;
mod compression;
mod config;
mod config_hedging;
mod config_live;
mod config_resilience;
mod config_transport;
mod entity;
mod formats;
mod hedging_percentile;
mod multipart;
mod observability;
mod openapi;
mod pipeline;
mod proptest_encoding;
mod proptest_headers;
mod proptest_paths;
mod responses;
mod retry;
mod safety;
mod streaming;
mod transport;
mod upload;
