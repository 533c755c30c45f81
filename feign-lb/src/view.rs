//! Views: precomputed index lists over a snapshot (all instances, one zone, one hint value, ...)
//! with the per-view cursor state round robin and weighted picks need.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::stride::Stride;

/// A subset of a snapshot's instances, by index, with its own cursors.
#[derive(Debug)]
pub(crate) struct View {
    pub(crate) members: Box<[u32]>,
    cursor: AtomicUsize,
    stride: Option<Stride>,
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
                let (generation, pos) = stride.position();
                (at(pos)?, generation)
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
