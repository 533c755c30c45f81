//! Views: precomputed index lists over a snapshot (all instances, one zone, one hint value, ...)
//! with the per-view cursor state round robin and weighted picks need.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The largest scaled weight of the stride schedule.
const MAX_WEIGHT: u64 = u16::MAX as u64;

/// A subset of a snapshot's instances, by index, with its own cursors.
#[derive(Debug)]
pub(crate) struct View {
    pub(crate) members: Box<[u32]>,
    cursor: AtomicUsize,
    stride: Option<Stride>,
}

/// gRPC's static stride scheduler: lock-free smooth weighted round robin whose cost depends on
/// the spread of the weights, not on their sum.
///
/// gRPC's sequence number `seq` stands for position `seq % n` in generation `seq / n`; only
/// the generation modulo [`MAX_WEIGHT`] matters, so the state is kept as that pair, packed
/// (generation in the high half), and a pick needs no division.
#[derive(Debug)]
struct Stride {
    scaled: Box<[u16]>,
    state: AtomicU64,
}

/// Where a view's rotations stand: the member each would pick next (an instance index of the
/// view's snapshot), so that a view over the next list can carry on from there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NextUp {
    /// Round robin's next member.
    pub(crate) round_robin: u32,
    /// The weighted schedule's next member and generation (round robin's, when there is no
    /// schedule).
    pub(crate) weighted: (u32, u64),
}

impl View {
    /// A view over `members` whose rotations start at a random point drawn from `start`;
    /// `weights` (indexed by instance) enables the weighted schedule.
    pub(crate) fn new(members: Vec<u32>, weights: Option<&[f64]>, start: u64) -> View {
        let n = members.len().max(1) as u64;
        let position = (start % n) as usize;
        View::resumed(members, weights, position, (position, start / n))
    }

    /// A view over `members` whose round robin goes on at position `next` and whose weighted
    /// schedule at position `weighted.0` of generation `weighted.1`: how a view over a changed
    /// list carries on the rotation of the view it replaces.
    pub(crate) fn resumed(
        members: Vec<u32>,
        weights: Option<&[f64]>,
        next: usize,
        weighted: (usize, u64),
    ) -> View {
        let n = members.len();
        let stride = weights.and_then(|w| Stride::new(&members, w, weighted));
        View {
            cursor: AtomicUsize::new(if next < n { next } else { 0 }),
            members: members.into_boxed_slice(),
            stride,
        }
    }

    /// The members the rotations would pick next; `None` for an empty view.
    pub(crate) fn next_up(&self) -> Option<NextUp> {
        let at = |pos: usize| self.members.get(pos).copied();
        let round_robin = at(self.cursor.load(Ordering::Relaxed))?;
        let weighted = match &self.stride {
            Some(stride) => {
                let (generation, pos) = unpack(stride.state.load(Ordering::Relaxed));
                (at(pos as usize)?, generation)
            }
            None => (round_robin, 0),
        };
        Some(NextUp {
            round_robin,
            weighted,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The member at `pos`, as an instance index.
    pub(crate) fn at(&self, pos: usize) -> usize {
        self.members[pos] as usize
    }

    /// The next position in round-robin order (callers ensure the view is not empty). A view
    /// never changes size, so the cursor wraps at its length: no division on a pick, and the
    /// rotation order holds for ever.
    pub(crate) fn next_round_robin(&self) -> usize {
        let len = self.members.len();
        debug_assert!(len > 0);
        self.cursor
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                Some(if c + 1 >= len { 0 } else { c + 1 })
            })
            .unwrap_or_else(|c| c)
    }

    /// The next position of the weighted schedule (round robin when there are no weights).
    pub(crate) fn next_weighted(&self) -> usize {
        match &self.stride {
            Some(stride) => stride.next(),
            None => self.next_round_robin(),
        }
    }
}

impl Stride {
    /// The schedule over `members`, starting at position `start.0` of generation `start.1`
    /// (both wrapped into range). Weights are scaled to the heaviest: a member of weight 0 is
    /// never picked, any other at least once in [`MAX_WEIGHT`] generations. `None` when every
    /// member weighs the same (0 included): round robin then.
    fn new(members: &[u32], weights: &[f64], start: (usize, u64)) -> Option<Stride> {
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

    /// Whether position `pos` is picked in generation `generation`.
    fn picks(&self, generation: u64, pos: u64) -> bool {
        let weight = u64::from(self.scaled[pos as usize]);
        let offset = MAX_WEIGHT / 2 * pos;
        (weight * generation + offset) % MAX_WEIGHT >= MAX_WEIGHT - weight
    }

    /// Claims the next picked position: skips the positions the schedule leaves out locally,
    /// then moves the shared state past the pick with one compare-and-swap. The heaviest member
    /// is picked in every generation, so the scan ends within one round.
    fn next(&self) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_keeps_order_across_the_wrap() {
        let view = View::new(vec![0, 1, 2], None, (usize::MAX - 2) as u64);
        let picks: Vec<usize> = (0..10).map(|_| view.next_round_robin()).collect();
        for pair in picks.windows(2) {
            assert_eq!(pair[1], (pair[0] + 1) % 3, "{picks:?}");
        }
    }

    #[test]
    fn weighted_five_one_one_interleaves() {
        let weights = [5.0, 1.0, 1.0];
        let view = View::new(vec![0, 1, 2], Some(&weights), 0);
        let picks: Vec<usize> = (0..70).map(|_| view.next_weighted()).collect();
        // Every window of 7 holds exactly 5 a's, one b and one c, and b and c are never adjacent.
        for chunk in picks.chunks(7) {
            assert_eq!(chunk.iter().filter(|&&p| p == 0).count(), 5, "{picks:?}");
        }
        for pair in picks.windows(2) {
            assert!(
                !(pair[0] != 0 && pair[1] != 0),
                "minor picks adjacent: {picks:?}"
            );
        }
    }
}
