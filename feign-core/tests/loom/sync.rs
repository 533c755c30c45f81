//! loom's counterparts of `src/sync.rs`.

pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
pub(crate) use loom::sync::{Arc, Mutex, MutexGuard};

pub(crate) use crate::support::ArcSwap;

/// tokio's `Mutex`, as the token refresh uses it: `try_lock`, and `lock` awaited. The model
/// runs one future per loom thread (`block_on`), so waiting for the lock may block that thread.
#[derive(Debug)]
pub(crate) struct AsyncMutex<T>(Mutex<T>);

/// The lock was held.
#[derive(Debug)]
pub(crate) struct TryLockError;

impl<T> AsyncMutex<T> {
    pub(crate) fn new(value: T) -> Self {
        AsyncMutex(Mutex::new(value))
    }

    pub(crate) fn try_lock(&self) -> Result<MutexGuard<'_, T>, TryLockError> {
        self.0.try_lock().map_err(|_| TryLockError)
    }

    #[allow(clippy::unused_async)] // tokio's is awaited
    pub(crate) async fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap()
    }
}
