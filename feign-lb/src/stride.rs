//! The weighted schedule of a view: gRPC's static stride scheduler, one compare-and-swap per
//! pick. Checked by the `stride_model` of `tests/loom/`, which compiles this file beside loom's
//! atomics.

use crate::sync::{AtomicU64, Ordering};

/// The largest scaled weight of the stride schedule.
const MAX_WEIGHT: u64 = u16::MAX as u64;

/// gRPC's static stride scheduler: lock-free smooth weighted round robin whose cost depends on
/// the spread of the weights, not on their sum.
///
/// gRPC's sequence number `seq` stands for position `seq % n` in generation `seq / n`; only
/// the generation modulo [`MAX_WEIGHT`] matters, so the state is kept as that pair, packed
/// (generation in the high half), and a pick needs no division.
#[derive(Debug)]
pub(crate) struct Stride {
    scaled: Box<[u16]>,
    state: AtomicU64,
}

impl Stride {
    /// The schedule over `members`, starting at position `start.0` of generation `start.1`
    /// (both wrapped into range). Weights are scaled to the heaviest: a member of weight 0 is
    /// never picked, any other at least once in [`MAX_WEIGHT`] generations. `None` when every
    /// member weighs the same (0 included): round robin then.
    pub(crate) fn new(members: &[u32], weights: &[f64], start: (usize, u64)) -> Option<Stride> {
        let weight = |m: u32| weights[m as usize];
        let max = members.iter().map(|&m| weight(m)).fold(0.0, f64::max);
        if members.iter().all(|&m| weight(m) == max) {
            return None; // equal weights: plain round robin
        }
        let scaled = members
            .iter()
            .map(|&m| {
                let w = weight(m);
                if w <= 0.0 {
                    return 0;
                }
                ((w / max * MAX_WEIGHT as f64).round() as u64).clamp(1, MAX_WEIGHT) as u16
            })
            .collect();
        let n = members.len() as u64;
        let (position, generation) = (start.0 as u64 % n, start.1 % MAX_WEIGHT);
        Some(Stride {
            scaled,
            state: AtomicU64::new(pack(generation, position)),
        })
    }

    /// Where the schedule stands: its generation and the position it looks at next.
    pub(crate) fn position(&self) -> (u64, usize) {
        let (generation, pos) = unpack(self.state.load(Ordering::Relaxed));
        (generation, pos as usize)
    }

    /// Whether position `pos` is picked in generation `generation`.
    fn picks(&self, generation: u64, pos: u64) -> bool {
        let weight = u64::from(self.scaled[pos as usize]);
        let offset = MAX_WEIGHT / 2 * pos;
        (weight * generation + offset) % MAX_WEIGHT >= MAX_WEIGHT - weight
    }

    /// Claims the next picked position: skips the positions the schedule leaves out locally,
    /// then moves the shared state past the pick with one compare-and-swap. The heaviest member
    /// is picked in every generation, so the scan ends within one round.
    pub(crate) fn next(&self) -> usize {
        let n = self.scaled.len() as u64;
        let mut current = self.state.load(Ordering::Relaxed);
        loop {
            let (mut generation, mut pos) = unpack(current);
            while !self.picks(generation, pos) {
                (generation, pos) = step(generation, pos, n);
            }
            let (next_generation, next_pos) = step(generation, pos, n);
            let next = pack(next_generation, next_pos);
            match self.state.compare_exchange_weak(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return pos as usize,
                Err(actual) => current = actual,
            }
        }
    }
}

/// The position after `pos` among `n`, moving to the next generation (modulo
/// [`MAX_WEIGHT`]) at the end of a round.
fn step(generation: u64, pos: u64, n: u64) -> (u64, u64) {
    if pos + 1 < n {
        (generation, pos + 1)
    } else {
        ((generation + 1) % MAX_WEIGHT, 0)
    }
}

fn pack(generation: u64, pos: u64) -> u64 {
    (generation << 32) | pos
}

fn unpack(state: u64) -> (u64, u64) {
    (state >> 32, state & 0xFFFF_FFFF)
}
