//! The synchronization types of the in-flight count ([`crate::listed`]), named in one place:
//! `tests/loom/` compiles that module again beside a `sync` of loom's types, so its models
//! check the code that ships.

pub(crate) use std::sync::atomic::{AtomicU32, Ordering};
pub(crate) use std::sync::Arc;
