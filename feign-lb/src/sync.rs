//! The synchronization types of the in-flight count and the rebuild gate ([`crate::listed`])
//! and of the weighted round robin ([`crate::stride`]), named in one place: `tests/loom/`
//! compiles those modules again beside a `sync` of loom's types, so its models check the code
//! that ships.

pub(crate) use arc_swap::ArcSwap;
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
pub(crate) use std::sync::Arc;
