//! How each policy draws one instance from a pick's candidates: once over a view on the fast
//! path, or over the members that pass a scan when the fast path kept missing.

use crate::config::Policy;
use crate::context::PickContext;
use crate::rng::Draw;
use crate::snapshot::Snapshot;
use crate::view::View;

/// A policy drawing over one snapshot.
pub(crate) struct PolicyDraw<'a> {
    pub(crate) policy: Policy,
    pub(crate) snap: &'a Snapshot,
    pub(crate) cx: &'a PickContext<'a>,
    /// Peak-EWMA's decay, to compare two latency estimates.
    pub(crate) decay_ns: f64,
}

impl PolicyDraw<'_> {
    /// One draw of the policy over `view`, if it lands on an eligible instance. Two-choice
    /// policies take the better eligible candidate of their pair.
    pub(crate) fn once(&self, view: &View, eligible: impl Fn(usize) -> bool) -> Option<usize> {
        if view.is_empty() {
            return None;
        }
        let at = |pos: usize| Some(view.at(pos)).filter(|&i| eligible(i));
        match self.policy {
            Policy::RoundRobin => at(view.next_round_robin()),
            Policy::Weighted => at(view.next_weighted()),
            Policy::Random => self.uniform(view.len(), at),
            Policy::LeastRequest | Policy::PeakEwma => self.best_of_two(view.len(), at),
        }
    }

    /// Draws among the eligible members of `view` by scanning it: O(n), used only when the
    /// fast path kept landing on ineligible instances.
    pub(crate) fn scan(&self, view: &View, eligible: impl Fn(usize) -> bool) -> Option<usize> {
        let members = || {
            view.members
                .iter()
                .map(|&m| m as usize)
                .filter(|&i| eligible(i))
        };
        let count = || members().count();
        let at = |pos: usize| members().nth(pos);
        if self.policy == Policy::Weighted {
            let weighs = |i: usize| self.snap.weights[i] > 0.0;
            // Weight 0 means no traffic, unless the whole view weighs 0 (then all share).
            if view.members.iter().any(|&m| weighs(m as usize)) {
                return self.by_weight(members);
            }
            return self.uniform(count(), at);
        }
        let count = count();
        match self.policy {
            Policy::LeastRequest | Policy::PeakEwma => self.best_of_two(count, at),
            _ => self.uniform(count, at),
        }
    }

    /// Uniformly one of `len` positions; `at` maps a position to an eligible instance.
    fn uniform(&self, len: usize, at: impl Fn(usize) -> Option<usize>) -> Option<usize> {
        if len == 0 {
            return None;
        }
        at(self.cx.rng.below(len))
    }

    /// The better of two distinct random positions among `len`, or the one that is eligible.
    fn best_of_two(&self, len: usize, at: impl Fn(usize) -> Option<usize>) -> Option<usize> {
        match len {
            0 => None,
            1 => at(0),
            _ => {
                let (a, b) = self.cx.rng.pair_below(len);
                match (at(a), at(b)) {
                    (Some(a), Some(b)) => Some(self.better(a, b)),
                    (a, b) => a.or(b),
                }
            }
        }
    }

    /// One of `members` with a chance proportional to its weight; none of weight 0.
    fn by_weight<I: Iterator<Item = usize>>(&self, members: impl Fn() -> I) -> Option<usize> {
        let weights = &self.snap.weights;
        let total: f64 = members().map(|i| weights[i]).sum();
        if total <= 0.0 {
            return None;
        }
        let mut target = self.cx.rng.unit() * total;
        let mut last = None;
        for i in members().filter(|&i| weights[i] > 0.0) {
            if target < weights[i] {
                return Some(i);
            }
            target -= weights[i];
            last = Some(i);
        }
        last // rounding left the target at the very end
    }

    /// The less loaded of two instances (the first on a tie).
    fn better(&self, a: usize, b: usize) -> usize {
        let (sa, sb) = (&self.snap.stats[a], &self.snap.stats[b]);
        let a_wins = match self.policy {
            Policy::PeakEwma => sa.peak_ewma_at_most(
                sa.in_flight(),
                sb,
                sb.in_flight(),
                || self.cx.now(),
                self.decay_ns,
            ),
            _ => sa.in_flight() <= sb.in_flight(),
        };
        if a_wins {
            a
        } else {
            b
        }
    }
}
