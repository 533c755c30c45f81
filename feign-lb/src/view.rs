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

impl View {
    /// A view over `members`; `weights` (indexed by instance) enables the weighted schedule.
    pub(crate) fn new(members: Vec<u32>, weights: Option<&[u32]>, start: u64) -> View {
        let stride = weights.and_then(|w| Stride::new(&members, w, start));
        View {
            cursor: AtomicUsize::new((start % members.len().max(1) as u64) as usize),
            members: members.into_boxed_slice(),
            stride,
        }
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
        let weights = [5, 1, 1];
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
