//! A live client's state (feature `config`): what its calls start from, swapped whole when its
//! properties change. A call keeps what it started with to its end.

use std::sync::Arc;

use crate::sync::ArcSwap;

/// What a live client's calls start from.
pub(crate) struct Live<T> {
    current: ArcSwap<T>,
}

impl<T> Live<T> {
    /// `first` in force.
    pub(crate) fn new(first: Arc<T>) -> Self {
        Live {
            current: ArcSwap::new(first),
        }
    }

    /// What is in force now, kept by a call to its end.
    pub(crate) fn load(&self) -> Arc<T> {
        self.current.load_full()
    }

    /// Puts `next` in force for the calls that start from now on.
    pub(crate) fn store(&self, next: Arc<T>) {
        self.current.store(next);
    }
}
