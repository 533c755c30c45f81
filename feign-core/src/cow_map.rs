//! A map read on every call and written once per key, for per-method state.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;

/// Readers borrow the current map without a lock; an insert copies it under a mutex only
/// writers take. Made for keys that are few and fixed by the program, such as client methods.
pub(crate) struct CopyOnWriteMap<K, V, S = std::collections::hash_map::RandomState> {
    current: ArcSwap<HashMap<K, V, S>>,
    inserting: Mutex<()>,
}

impl<K, V, S> CopyOnWriteMap<K, V, S>
where
    K: Eq + Hash + Clone,
    V: Clone,
    S: BuildHasher + Clone + Default,
{
    pub(crate) fn new() -> Self {
        CopyOnWriteMap {
            current: ArcSwap::from_pointee(HashMap::default()),
            inserting: Mutex::new(()),
        }
    }

    /// Runs `read` on the value of `key`, made by `make` (once) if the key is new.
    pub(crate) fn with<R>(
        &self,
        key: K,
        make: impl FnOnce() -> V,
        read: impl FnOnce(&V) -> R,
    ) -> R {
        if let Some(value) = self.current.load().get(&key) {
            return read(value);
        }
        let _inserting = self
            .inserting
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let current = self.current.load_full();
        if let Some(value) = current.get(&key) {
            return read(value);
        }
        let value = make();
        let result = read(&value);
        let mut next = HashMap::clone(&current);
        next.insert(key, value);
        self.current.store(Arc::new(next));
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_each_value_once() {
        let map: CopyOnWriteMap<&str, u32> = CopyOnWriteMap::new();
        let mut made = 0;
        for _ in 0..3 {
            assert_eq!(
                map.with(
                    "a",
                    || {
                        made += 1;
                        7
                    },
                    |v| *v
                ),
                7
            );
        }
        assert_eq!(map.with("b", || 9, |v| *v), 9);
        assert_eq!(map.with("a", || 0, |v| *v), 7);
        assert_eq!(made, 1);
    }
}
