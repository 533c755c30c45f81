//! Model checks of the registry's leases and delta queue with loom, which runs each model under
//! every interleaving of its threads (up to a preemption bound) and fails on the first that
//! breaks an assertion. `changes` checks `src/lease.rs` and `src/delta.rs`: renewals, changes
//! and cancellations of one stored lease, and the entries they leave in the delta queue;
//! `lease` holds the lease's sequential checks, run the same way.
//!
//! The models compile the real `src/lease.rs`, `src/delta.rs` and `src/record.rs` (`#[path]`)
//! beside a `sync` module of loom's types, where the crate has std's and arc-swap's
//! (`src/sync.rs`); that is why this is a binary of its own, apart from `tests/it/`. ArcSwap is
//! not loom-aware: a stand-in with the same operations on loom's `Mutex` takes its place
//! (`feign-core/tests/loom/support.rs`). The table of leases around them is behind an `RwLock`
//! in `Registry`; a cancelled lease is taken out of it under that lock, so what is left to race
//! is what holders of the lease found before (a renewal, an administrative change).
//!
//! Run with `cargo test -p feign-eureka-server --test loom` (about a second, each model bounded
//! at two or three preemptions). A deeper search, about three minutes in a debug build on two
//! cores: `LOOM_MAX_PREEMPTIONS=4 cargo test -p feign-eureka-server --test loom` (the variable
//! overrides every model's bound).

#[path = "../../../feign-core/tests/loom/support.rs"]
#[allow(dead_code)] // each crate's models use part of it
mod support;

/// loom's counterparts of `src/sync.rs`.
mod sync {
    pub(crate) use crate::support::ArcSwap;
    pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};
}

#[path = "../../src/delta.rs"]
#[allow(dead_code)]
mod delta;
#[path = "../../src/lease.rs"]
#[allow(dead_code)]
mod lease;
#[path = "../../src/record.rs"]
#[allow(dead_code)]
mod record;

mod changes;
#[path = "lease.rs"]
mod lease_checks;
