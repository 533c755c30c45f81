//! Small lock-free, allocation-free random sources that can be seeded for deterministic tests:
//! a shared one for the rare draws (view start positions, retry jitter) and a per-thread one
//! for the draws of every pick, which then touch no shared cache line.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function over its Weyl sequence.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The draws built on a source of uniform 64-bit values.
pub(crate) trait Draw {
    fn next_u64(&self) -> u64;

    /// A uniform index below `n`; `n` must be non-zero (callers check).
    fn below(&self, n: usize) -> usize {
        debug_assert!(n > 0);
        // Lemire's multiply-shift: unbiased enough for balancing and free of `%`.
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Two distinct uniform indices below `n` (`2 <= n <= 2^32`), from one draw: each half
    /// of it picks one index by multiply-shift.
    fn pair_below(&self, n: usize) -> (usize, usize) {
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
    fn unit(&self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// SplitMix64 over an atomic counter: each draw is one `fetch_add`, so concurrent users never
/// block each other and a seeded source replays the same sequence on one thread.
#[derive(Debug)]
pub(crate) struct Rng {
    state: AtomicU64,
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng {
            state: AtomicU64::new(seed),
        }
    }
}

impl Draw for Rng {
    fn next_u64(&self) -> u64 {
        mix(self
            .state
            .fetch_add(GAMMA, Ordering::Relaxed)
            .wrapping_add(GAMMA))
    }
}

/// SplitMix64 for one thread: the same sequence as [`Rng`], in a plain cell.
#[derive(Debug)]
pub(crate) struct LocalRng {
    state: Cell<u64>,
}

impl LocalRng {
    pub(crate) fn new(seed: u64) -> LocalRng {
        LocalRng {
            state: Cell::new(seed),
        }
    }
}

impl Draw for LocalRng {
    fn next_u64(&self) -> u64 {
        let z = self.state.get().wrapping_add(GAMMA);
        self.state.set(z);
        mix(z)
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
    fn seeded_sequences_repeat_shared_or_local() {
        let a = Rng::new(7);
        let b = Rng::new(7);
        let local = LocalRng::new(7);
        for _ in 0..100 {
            let expected = a.next_u64();
            assert_eq!(b.next_u64(), expected);
            assert_eq!(local.next_u64(), expected);
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
