//! The synchronization types of the in-flight count and the rebuild gate ([`crate::listed`]),
//! named in one place:
//! `tests/loom/` compiles that module again beside a `sync` of loom's types, so its models
//! check the code that ships.

pub(crate) use arc_swap::ArcSwap;
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
pub(crate) use std::sync::Arc;
