//! One pick over a snapshot, step by step: an exact instance when one is asked for, then the
//! routing filters narrowing the candidates, then the policy's draw, then a scan that relaxes
//! ejection and already-tried instances when the draws keep missing.

use std::sync::atomic::{AtomicU64, Ordering};

use feign_core::resolve::ChooseRequest;

use crate::config::Policy;
use crate::context::PickContext;
use crate::filter::{self, Filters, HINT_KEY, VERSION_KEY};
use crate::narrowing::{Narrowing, Pred};
use crate::policy::PolicyDraw;
use crate::rng::Draw;
use crate::snapshot::Snapshot;
use crate::state::ServiceState;
use crate::view::View;

/// How often the policy draws before the pick falls back to scanning.
const FAST_TRIES: usize = 3;

/// The instance a service picked last, for the same-instance preference: the low 32 bits of
/// the snapshot version and the index, packed in one atomic.
pub(crate) struct LastChosen(AtomicU64);

impl LastChosen {
    /// Nothing picked yet.
    pub(crate) fn new() -> Self {
        LastChosen(AtomicU64::new(u64::MAX))
    }

    /// Remembers instance `index` of the snapshot with `version`.
    pub(crate) fn record(&self, version: u64, index: usize) {
        let packed = (version << 32) | (index as u64 & 0xFFFF_FFFF);
        self.0.store(packed, Ordering::Relaxed);
    }

    /// The index last picked if it was picked from the snapshot with `version`.
    fn in_snapshot(&self, version: u64) -> Option<usize> {
        let packed = self.0.load(Ordering::Relaxed);
        let (picked_in, index) = ((packed >> 32) as u32, (packed & 0xFFFF_FFFF) as usize);
        (picked_in == version as u32).then_some(index)
    }
}

/// Which checks a candidate may skip.
#[derive(Clone, Copy)]
struct Relaxed {
    ejection: bool,
    tried: bool,
}

/// One pick: the snapshot and request it reads, and what of its service it consults.
pub(crate) struct Pick<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) req: &'a ChooseRequest<'a>,
    pub(crate) cx: PickContext<'a>,
    pub(crate) state: &'a ServiceState,
    pub(crate) policy: Policy,
    pub(crate) filters: &'a Filters,
    pub(crate) last_chosen: &'a LastChosen,
}

impl<'a> Pick<'a> {
    /// The index of the chosen instance, or `None` when every instance is filtered out.
    pub(crate) fn run(&self) -> Option<usize> {
        if let Some(i) = self.exact_instance() {
            return Some(i);
        }
        let mut narrowing = Narrowing::new(&self.snap.all);
        self.narrow(&mut narrowing)?;
        // Borrowed, not moved out: moving the predicates would copy them on every pick.
        let (base, preds) = (narrowing.base, narrowing.preds());
        let panic = self.state.panicking(self.snap.stats.len());
        self.draw(base, preds, panic)
            .or_else(|| self.scan(base, preds, panic))
    }

    /// Step 1, exact instances: the retry policy's same-instance retry, then the sticky
    /// session, then the instance picked last.
    fn exact_instance(&self) -> Option<usize> {
        self.retried_instance()
            .or_else(|| self.sticky_instance())
            .or_else(|| self.last_instance())
    }

    fn retried_instance(&self) -> Option<usize> {
        let id = self.req.same_instance?;
        self.snap.by_id.get(id).map(|&i| i as usize)
    }

    fn sticky_instance(&self) -> Option<usize> {
        let sticky = self.filters.sticky.as_ref()?;
        let id = filter::cookie(self.req.headers, &sticky.cookie)?;
        let i = *self.snap.by_id.get(id)? as usize;
        self.usable(i).then_some(i)
    }

    fn last_instance(&self) -> Option<usize> {
        if !self.filters.same_instance {
            return None;
        }
        let i = self.last_chosen.in_snapshot(self.snap.version)?;
        (i < self.snap.stats.len() && self.usable(i)).then_some(i)
    }

    /// Step 2, routing: narrows the candidates filter by filter, each skipped when it matches
    /// nothing. `None` when a required version has no instance.
    fn narrow(&self, narrowing: &mut Narrowing<'a>) -> Option<()> {
        self.by_zone(narrowing);
        self.by_version(narrowing)?;
        self.by_hint(narrowing);
        self.by_canary(narrowing);
        Some(())
    }

    /// The preferred zone, or the others when every instance of it failed recently.
    fn by_zone(&self, narrowing: &mut Narrowing<'a>) {
        let (Some(zone), Some((inside, outside))) = (&self.filters.zone, &self.snap.zone) else {
            return;
        };
        if inside.is_empty() {
            return;
        }
        let failed = zone.failover
            && inside
                .members
                .iter()
                .all(|&i| self.snap.stats[i as usize].recently_failed(self.cx.now()));
        let (view, pred) = if failed && !outside.is_empty() {
            (outside, Pred::InZone(&zone.zone, false))
        } else {
            (inside, Pred::InZone(&zone.zone, true))
        };
        narrowing.apply(self.snap, view, pred);
    }

    /// The version the request asks for; `None` when it is required and has no instance.
    fn by_version(&self, narrowing: &mut Narrowing<'a>) -> Option<()> {
        let Some(routing) = &self.filters.version else {
            return Some(());
        };
        let wanted =
            filter::header(self.req.headers, &routing.header).or(routing.default.as_deref());
        let Some(wanted) = wanted else {
            return Some(());
        };
        let applied =
            self.snap.versions.get(wanted).is_some_and(|view| {
                narrowing.apply(self.snap, view, Pred::Meta(VERSION_KEY, wanted))
            });
        (applied || !routing.required).then_some(())
    }

    /// The instances whose hint the request names.
    fn by_hint(&self, narrowing: &mut Narrowing<'a>) {
        let Some(hints) = &self.filters.hints else {
            return;
        };
        let Some(hint) =
            filter::header(self.req.headers, &hints.header).or(hints.default.as_deref())
        else {
            return;
        };
        if let Some(view) = self.snap.hints.get(hint) {
            narrowing.apply(self.snap, view, Pred::Meta(HINT_KEY, hint));
        }
    }

    /// Canaries for flagged requests and the canary share, stable instances for the rest.
    fn by_canary(&self, narrowing: &mut Narrowing<'a>) {
        let (Some(canary), Some((canaries, stable))) = (&self.filters.canary, &self.snap.canary)
        else {
            return;
        };
        let flagged = canary
            .header
            .as_ref()
            .and_then(|h| filter::header(self.req.headers, h))
            .is_some_and(|v| !v.eq_ignore_ascii_case("false"));
        let to_canary = flagged
            || (canary.share_ppm > 0 && self.cx.rng.below(1_000_000) < canary.share_ppm as usize);
        let (view, pred) = if to_canary {
            (canaries, Pred::Canary(true))
        } else {
            (stable, Pred::Canary(false))
        };
        narrowing.apply(self.snap, view, pred);
    }

    /// Step 3, the fast path: the policy's own draw, re-drawn a few times if it lands on an
    /// instance that is tried, ejected or still ramping up.
    fn draw(&self, base: &View, preds: &[Option<Pred<'_>>], panic: bool) -> Option<usize> {
        let relaxed = Relaxed {
            ejection: panic,
            tried: false,
        };
        let ramping = self.state.ramping(|| self.cx.now());
        let policy = self.policy_draw();
        (0..FAST_TRIES).find_map(|_| {
            let i = policy.once(base, |i| self.accepts(preds, i, relaxed))?;
            (!ramping || self.passes_ramp(i)).then_some(i)
        })
    }

    /// Step 4, the slow path: scans the candidates, relaxing ejection (panic), then ejection
    /// and already-tried.
    fn scan(&self, base: &View, preds: &[Option<Pred<'_>>], panic: bool) -> Option<usize> {
        let policy = self.policy_draw();
        [(panic, false), (true, false), (true, true)]
            .into_iter()
            .find_map(|(ejection, tried)| {
                let relaxed = Relaxed { ejection, tried };
                policy.scan(base, |i| self.accepts(preds, i, relaxed))
            })
    }

    fn policy_draw(&self) -> PolicyDraw<'_> {
        PolicyDraw {
            policy: self.policy,
            snap: self.snap,
            cx: &self.cx,
            decay_ns: self.state.decay_ns,
        }
    }

    /// Whether instance `i` meets the routing predicates and, unless relaxed, was not tried in
    /// this call and is not ejected.
    fn accepts(&self, preds: &[Option<Pred<'_>>], i: usize, relaxed: Relaxed) -> bool {
        preds
            .iter()
            .flatten()
            .all(|p| p.holds(self.snap.instance(i)))
            && (relaxed.tried || self.req.tried.is_empty() || !self.tried(i))
            && (relaxed.ejection || !self.ejected(i))
    }

    /// Neither tried in this call nor ejected.
    fn usable(&self, i: usize) -> bool {
        !self.tried(i) && !self.ejected(i)
    }

    fn tried(&self, i: usize) -> bool {
        let id = self.snap.instance(i).instance_id_arc();
        self.req
            .tried
            .iter()
            .any(|t| std::sync::Arc::ptr_eq(t, id) || **t == **id)
    }

    fn ejected(&self, i: usize) -> bool {
        let stats = &self.snap.stats[i];
        stats.ejection_pending_fast() && stats.is_ejected(self.cx.now(), self.state)
    }

    /// Whether a ramping instance takes this pick, by its share of normal traffic.
    fn passes_ramp(&self, i: usize) -> bool {
        let factor = self.snap.stats[i].ramp_factor(
            self.cx.now(),
            self.state.slow_start_window_ns,
            self.state.slow_start_min,
        );
        factor >= 1.0 || self.cx.rng.unit() < factor
    }
}
