//! The one way this crate takes a lock.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`; one whose holder panicked (a failed assertion in a test's closure) is used as
/// is: every change under this crate's locks is one push, clear or assignment, never left
/// half-made.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
