//! Model checks of feign-lb's lock-free parts with loom, which runs each model under every
//! interleaving of its threads (up to a preemption bound) and fails on the first that breaks an
//! assertion. `swap` checks `src/listed.rs`: the listing of an instance in a snapshot, the
//! attempts counted by its reference count, what a snapshot swap retires, and the gate that
//! lets one caller at a time rebuild. `stride_model` checks `src/stride.rs`: the weighted round
//! robin's compare-and-swap.
//!
//! The models compile the real `src/listed.rs` and `src/stride.rs` (`#[path]`) beside a `sync` module of loom's
//! types, where the crate has std's (`src/sync.rs`); that is why this is a binary of its own,
//! apart from `tests/it/`. `stats` below stands in for `InstanceStats`, of which `listed.rs`
//! reads only the listings count, and the snapshots are reduced to their version and instance
//! lists, built as `Snapshot::build` builds them (listings reused by instance, the rest retired
//! by `listed::retire`) through `listed::Rebuilding` as `ServiceLb::refresh` does, and published
//! through a loom stand-in for ArcSwap (`feign-core/tests/loom/support.rs`).
//!
//! Run with `cargo test -p feign-lb --test loom` (under a second, each model bounded at four
//! preemptions). A deeper search, still seconds:
//! `LOOM_MAX_PREEMPTIONS=6 cargo test -p feign-lb --test loom` (the variable overrides every
//! model's bound).

#[path = "../../../feign-core/tests/loom/support.rs"]
#[allow(dead_code)] // each crate's models use part of it
mod support;

/// loom's counterparts of `src/sync.rs`.
mod sync {
    pub(crate) use crate::support::ArcSwap;
    #[allow(unused_imports)] // the stand-in `stats` names its own
    pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
    pub(crate) use loom::sync::Arc;
}

#[path = "../../src/listed.rs"]
#[allow(dead_code)]
mod listed;

#[path = "../../src/stride.rs"]
#[allow(dead_code)] // `position` is the views' and not modelled
mod stride;

/// What `listed.rs` reads of `InstanceStats`: the listings count (the rest is the instance
/// and its latency and failure state, which the count does not touch).
mod stats {
    use loom::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    use loom::sync::Arc;

    pub(crate) struct InstanceStats {
        pub(crate) listings: AtomicU32,
        pub(crate) id: &'static str,
        /// Set when the stats are freed.
        freed: Arc<AtomicBool>,
    }

    impl InstanceStats {
        pub(crate) fn new(id: &'static str, freed: Arc<AtomicBool>) -> InstanceStats {
            InstanceStats {
                listings: AtomicU32::new(0),
                id,
                freed,
            }
        }

        pub(crate) fn started(&self) {}
    }

    impl Drop for InstanceStats {
        fn drop(&mut self) {
            self.freed.store(true, Ordering::SeqCst);
        }
    }
}

mod stride_model;
mod swap;
