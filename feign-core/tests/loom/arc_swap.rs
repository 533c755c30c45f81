//! A stand-in for `arc_swap::ArcSwap` in the models, which is not loom-aware: the same `load`,
//! `load_full`, `store` and `swap` on one `Arc` (each one atomic step, as ArcSwap's are),
//! built on loom's `Mutex` so that loom sees every access. Shared by the loom models of the
//! crates that publish through ArcSwap (feign-lb and feign-eureka-server include this file).

use loom::sync::{Arc, Mutex};

/// `ArcSwap<T>` with loom's types.
#[derive(Debug)]
pub(crate) struct ArcSwap<T>(Mutex<Arc<T>>);

impl<T> ArcSwap<T> {
    pub(crate) fn new(value: Arc<T>) -> Self {
        ArcSwap(Mutex::new(value))
    }

    pub(crate) fn from_pointee(value: T) -> Self {
        ArcSwap::new(Arc::new(value))
    }

    /// The current value; ArcSwap's guard derefs to it the same way.
    pub(crate) fn load(&self) -> Arc<T> {
        self.load_full()
    }

    pub(crate) fn load_full(&self) -> Arc<T> {
        self.0.lock().unwrap().clone()
    }

    pub(crate) fn store(&self, value: Arc<T>) {
        drop(self.swap(value));
    }

    pub(crate) fn swap(&self, value: Arc<T>) -> Arc<T> {
        std::mem::replace(&mut *self.0.lock().unwrap(), value)
    }
}
