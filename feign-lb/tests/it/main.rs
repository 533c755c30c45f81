//! feign-lb's integration tests, one binary: each module is one concern, against real backends
//! on 127.0.0.1 (`feign_test_support::backend`).
//!
//! `tests/no_alloc.rs` stays a binary of its own: it counts allocations with a global allocator
//! and no harness, so no other test may run beside it.

mod any_client;
mod caching;
mod config;
mod config_live;
mod config_spring;
mod failover;
mod health;
mod hedge;
mod instance_updates;
mod metrics;
mod out_of_rotation;
mod policies;
mod retry_matrix;
mod snapshot_swaps;
mod subset;
