//! A published value with a version whose changes can be awaited: what every supplier keeps.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use futures_util::future::BoxFuture;
use tokio::sync::watch;

/// An immutable value swapped atomically, with a version that grows at each change readers
/// should hear of and a way to await the next one: the state behind an [`InstanceSupplier`].
///
/// Readers never take a lock ([`Versioned::read`] is one atomic load); writers replace the
/// whole value. [`Versioned::version`] and [`Versioned::changed`] are what
/// [`InstanceSupplier::version`] and [`InstanceSupplier::changed`] return. Versions start at 1,
/// so 0 can stand for "nothing seen yet".
///
/// ```
/// use feign_lb::Versioned;
///
/// let names = Versioned::new(vec!["a"]);
/// let seen = names.version();
/// names.update(|list| [list.as_slice(), &["b"]].concat());
/// assert!(names.version() > seen);
/// assert_eq!(names.read(|list| list.len()), 2);
/// ```
///
/// [`InstanceSupplier`]: crate::InstanceSupplier
/// [`InstanceSupplier::version`]: crate::InstanceSupplier::version
/// [`InstanceSupplier::changed`]: crate::InstanceSupplier::changed
pub struct Versioned<T> {
    value: ArcSwap<T>,
    version: AtomicU64,
    tx: watch::Sender<u64>,
}

impl<T> Versioned<T> {
    /// `value` at version 1.
    pub fn new(value: T) -> Self {
        let (tx, _) = watch::channel(1);
        Versioned {
            value: ArcSwap::from_pointee(value),
            version: AtomicU64::new(1),
            tx,
        }
    }

    /// Reads the current value without a lock or a reference count.
    pub fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.value.load())
    }

    /// The current value (one atomic load and a reference count).
    pub fn get(&self) -> Arc<T> {
        self.value.load_full()
    }

    /// Replaces the value, moves the version on and wakes everyone waiting.
    pub fn publish(&self, value: T) {
        self.value.store(Arc::new(value));
        self.bump();
    }

    /// Replaces the value with `f` of the current one (retried if another writer came
    /// first), then moves the version on and wakes everyone waiting.
    pub fn update(&self, f: impl FnMut(&T) -> T) {
        self.update_quietly(f);
        self.bump();
    }

    /// Like [`Versioned::update`], without moving the version: for changes readers need not
    /// hear of (a refreshed timestamp beside an unchanged list).
    pub fn update_quietly(&self, mut f: impl FnMut(&T) -> T) {
        self.value.rcu(|current| f(current));
    }

    /// A number that grows at every [`Versioned::publish`] and [`Versioned::update`]. One
    /// atomic load.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Resolves once the version is past `seen` (at once if it already is). Never resolves
    /// after this value is dropped without changing again.
    pub fn changed(&self, seen: u64) -> BoxFuture<'static, ()> {
        let mut rx = self.tx.subscribe();
        Box::pin(async move {
            if rx.wait_for(|v| *v > seen).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }

    fn bump(&self) {
        let version = self.version.fetch_add(1, Ordering::AcqRel) + 1;
        self.tx.send_replace(version);
    }
}

impl<T: Default> Default for Versioned<T> {
    fn default() -> Self {
        Versioned::new(T::default())
    }
}

impl<T: fmt::Debug> fmt::Debug for Versioned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Versioned")
            .field("version", &self.version())
            .field("value", &self.value.load())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn changed_resolves_on_a_publish_and_not_on_a_quiet_update() {
        let value = Versioned::new(0_u32);
        let seen = value.version();
        assert_eq!(seen, 1);
        let wait = value.changed(seen);
        value.update_quietly(|v| v + 1);
        assert_eq!(value.version(), seen);
        let quiet = tokio::time::timeout(Duration::from_millis(20), value.changed(seen)).await;
        assert!(quiet.is_err(), "a quiet update woke a waiter");
        value.publish(5);
        wait.await;
        assert!(value.version() > seen);
        assert_eq!(*value.get(), 5);
        value.changed(seen).await; // already past: resolves at once
    }
}
