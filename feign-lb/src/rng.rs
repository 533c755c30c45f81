//! A small lock-free, allocation-free random source that can be seeded for deterministic tests.

use std::sync::atomic::{AtomicU64, Ordering};

/// SplitMix64 over an atomic counter: each draw is one `fetch_add`, so concurrent pickers never
/// block each other and a seeded balancer replays the same sequence on one thread.
#[derive(Debug)]
pub(crate) struct Rng {
    state: AtomicU64,
}

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng {
            state: AtomicU64::new(seed),
        }
    }

    pub(crate) fn next_u64(&self) -> u64 {
        let mut z = self
            .state
            .fetch_add(GAMMA, Ordering::Relaxed)
            .wrapping_add(GAMMA);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index below `n`; `n` must be non-zero (callers check).
    pub(crate) fn below(&self, n: usize) -> usize {
        debug_assert!(n > 0);
        // Lemire's multiply-shift: unbiased enough for balancing and free of `%`.
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Two distinct uniform indices below `n` (`2 <= n <= 2^32`), from one draw: each half
    /// of it picks one index by multiply-shift.
    pub(crate) fn pair_below(&self, n: usize) -> (usize, usize) {
        debug_assert!(n >= 2);
        let draw = self.next_u64();
        let scale = |half: u64, n: usize| ((u128::from(half) * n as u128) >> 32) as usize;
        let a = scale(draw >> 32, n);
        let mut b = scale(draw & 0xFFFF_FFFF, n - 1);
        if b >= a {
            b += 1;
        }
        (a, b)
    }

    /// A uniform float in `[0, 1)`.
    pub(crate) fn unit(&self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// A seed from the thread's random generator, for balancers built without one.
pub(crate) fn random_seed() -> u64 {
    rand::random()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_sequences_repeat() {
        let a = Rng::new(7);
        let b = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn pairs_are_distinct_and_in_range() {
        let rng = Rng::new(1);
        for n in 2..20 {
            for _ in 0..200 {
                let (a, b) = rng.pair_below(n);
                assert!(a < n && b < n && a != b);
            }
        }
    }

    #[test]
    fn below_covers_the_range_evenly() {
        let rng = Rng::new(3);
        let mut counts = [0u32; 5];
        for _ in 0..50_000 {
            counts[rng.below(5)] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}
