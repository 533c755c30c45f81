//! A map read on every call and written once per key, for per-method state.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};
use std::sync::PoisonError;

use crate::sync::{Arc, ArcSwap, Mutex};

/// Readers borrow the current map without a lock; an insert copies it under a mutex only
/// writers take. Made for keys that are few and fixed by the program, such as client methods.
///
/// Checked by the `cow_map` models of `tests/loom/`: a reader sees the map before or after an
/// insert, never a torn one, and no insert is lost to a concurrent one.
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

/// A hasher for the small maps read on every call, keyed by what the program itself holds
/// (addresses of statics, the origins it was configured with or discovered): a rotate, xor
/// and multiply per word. SipHash's resistance to chosen collisions is not needed there, as
/// the maps are small and bounded.
pub(crate) type QuickHash = BuildHasherDefault<QuickHasher>;

/// The hasher behind [`QuickHash`].
#[derive(Default)]
pub(crate) struct QuickHasher(u64);

impl Hasher for QuickHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut buf = [0_u8; 8];
            buf.copy_from_slice(word);
            self.write_u64(u64::from_le_bytes(buf));
        }
        let mut tail = [0_u8; 8];
        let rest = words.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        self.write_u64(u64::from_le_bytes(tail) ^ ((rest.len() as u64) << 56));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_hash_tells_apart_keys_that_differ_only_in_length_or_one_byte() {
        let hash = |key: &[u8]| {
            let mut hasher = QuickHasher::default();
            hasher.write(key);
            hasher.finish()
        };
        let keys: [&[u8]; 6] = [
            b"",
            b"a",
            b"a\0",
            b"127.0.0.1:8080",
            b"127.0.0.1:8081",
            b"127.0.0.1:80800",
        ];
        for (i, a) in keys.iter().enumerate() {
            assert_eq!(hash(a), hash(a));
            for b in &keys[i + 1..] {
                assert_ne!(hash(a), hash(b), "{a:?} and {b:?}");
            }
        }
    }
}
