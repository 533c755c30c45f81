//! What the loom models of every crate share (feign-lb's and feign-eureka-server's include this
//! file): the runner, and a stand-in for `arc_swap::ArcSwap`, which is not loom-aware.

use loom::sync::{Arc, Mutex};

/// Runs `model` under loom with `preemption_bound` unless `LOOM_MAX_PREEMPTIONS` sets one.
pub(crate) fn check(preemption_bound: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemption_bound);
    }
    builder.check(model);
}

/// `ArcSwap<T>` for the models: the same `load`, `load_full`, `store`, `swap` and
/// `compare_and_swap` on one `Arc`, each one atomic step as ArcSwap's are, on loom's `Mutex` so
/// that loom sees every access.
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

    /// Stores `new` if the current value is `current`; returns the value found.
    pub(crate) fn compare_and_swap(&self, current: &Arc<T>, new: Arc<T>) -> Arc<T> {
        let mut guard = self.0.lock().unwrap();
        if Arc::ptr_eq(&guard, current) {
            std::mem::replace(&mut *guard, new)
        } else {
            guard.clone()
        }
    }
}
