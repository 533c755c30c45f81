//! The synchronization types of the lease and the delta queue (`lease.rs`, `delta.rs`), named
//! in one place: `tests/loom/` compiles those modules again beside a `sync` of loom's types, so
//! its models check the code that ships.

pub(crate) use arc_swap::ArcSwap;
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
pub(crate) use std::sync::{Arc, Mutex, MutexGuard};
