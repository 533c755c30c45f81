//! The synchronization types of the lock-free parts (the copy-on-write map, the circuit breaker
//! and its state word, the adaptive limit, the token refresher), named in one place:
//! `tests/loom/` compiles those modules again beside a `sync` of loom's types, so its models
//! check the code that ships.

pub(crate) use arc_swap::ArcSwap;
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
pub(crate) use std::sync::{Arc, Mutex, MutexGuard};
/// The lock a token refresh holds across its `.await`.
pub(crate) use tokio::sync::Mutex as AsyncMutex;
