//! One service's balancer: its snapshot, kept in step with the supplier, and the pick.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use feign_core::{ChooseRequest, Chosen, Error, InstanceHandle};

use crate::clock::{nanos, Clock};
use crate::config::{Ejection, PeakEwma, Policy, SlowStart};
use crate::filter::{self, Filters, HINT_KEY, VERSION_KEY};
use crate::lifecycle::{Completion, CompletionStatus, LifecycleHook, LiveCounters};
use crate::metrics::ServiceMetrics;
use crate::retry::LbRetryPolicy;
use crate::rng::{Draw, LocalRng, Rng};
use crate::snapshot::{is_canary, Snapshot};
use crate::snapshot_cache::{self, Published};
use crate::view::View;
use crate::InstanceSupplier;

/// State shared by a service's balancer and its instances' observers.
pub(crate) struct ServiceShared {
    pub(crate) name: Arc<str>,
    pub(crate) clock: Clock,
    pub(crate) ejection: Ejection,
    pub(crate) slow_start_window_ns: u64,
    pub(crate) slow_start_min: f64,
    pub(crate) decay_ns: f64,
    pub(crate) default_rtt_ns: f64,
    pub(crate) error_penalty_ns: f64,
    pub(crate) failed_ttl_ns: u64,
    pub(crate) panic_threshold: f64,
    pub(crate) counters: LiveCounters,
    pub(crate) metrics: ServiceMetrics,
    pub(crate) hooks: Arc<[Arc<dyn LifecycleHook>]>,
    pub(crate) snapshot: Published,
    /// Instances ejected now (expired ejections are subtracted when first noticed).
    pub(crate) ejected: AtomicUsize,
    /// When the last slow-start ramp ends (0: none running), so picks skip the clock otherwise.
    ramping_until: AtomicU64,
}

impl ServiceShared {
    pub(crate) fn note_ramp(&self, start: u64) {
        if self.slow_start_window_ns > 0 {
            self.ramping_until.fetch_max(
                start.saturating_add(self.slow_start_window_ns),
                Ordering::Relaxed,
            );
        }
    }
}

/// Everything that configures one service's balancer.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) supplier: Option<Arc<dyn InstanceSupplier>>,
    pub(crate) policy: Policy,
    pub(crate) filters: Filters,
    pub(crate) ejection: Ejection,
    pub(crate) slow_start: SlowStart,
    pub(crate) peak_ewma: PeakEwma,
    pub(crate) panic_threshold: f64,
    pub(crate) retry: crate::RetryConfig,
    pub(crate) hooks: Arc<[Arc<dyn LifecycleHook>]>,
    pub(crate) seed: Option<u64>,
}

/// A service's balancer.
pub(crate) struct ServiceLb {
    pub(crate) shared: Arc<ServiceShared>,
    supplier: Option<Arc<dyn InstanceSupplier>>,
    policy: Policy,
    filters: Filters,
    rng: Rng,
    rebuilding: AtomicBool,
    last_chosen: AtomicU64,
    pub(crate) retry: Arc<LbRetryPolicy>,
}

/// What one pick works with besides the snapshot: the clock, read at most once and only when
/// needed, and the thread's random source.
struct PickContext<'a> {
    clock: &'a Clock,
    now_ns: Cell<u64>,
    rng: &'a LocalRng,
}

impl PickContext<'_> {
    fn now(&self) -> u64 {
        let v = self.now_ns.get();
        if v != 0 {
            return v;
        }
        let v = self.clock.now();
        self.now_ns.set(v);
        v
    }
}

/// A constraint a routing filter puts on the pick.
#[derive(Clone, Copy)]
enum Pred<'a> {
    InZone(&'a str, bool),
    Meta(&'static str, &'a str),
    Canary(bool),
}

impl Pred<'_> {
    fn holds(&self, instance: &crate::ServiceInstance) -> bool {
        match *self {
            Pred::InZone(zone, inside) => {
                instance
                    .zone()
                    .is_some_and(|z| z.eq_ignore_ascii_case(zone))
                    == inside
            }
            Pred::Meta(key, value) => instance.metadata().get(key).is_some_and(|v| v == value),
            Pred::Canary(yes) => is_canary(instance) == yes,
        }
    }
}

const FAST_TRIES: usize = 3;

impl ServiceLb {
    pub(crate) fn new(name: &str, settings: Settings, clock: Clock) -> ServiceLb {
        let seed = settings.seed.unwrap_or_else(crate::rng::random_seed);
        let failed_ttl = settings
            .filters
            .zone
            .as_ref()
            .map(|z| z.failed_ttl)
            .unwrap_or_default();
        let shared = Arc::new(ServiceShared {
            name: name.into(),
            clock,
            ejection: settings.ejection.clone(),
            slow_start_window_ns: nanos(settings.slow_start.window),
            slow_start_min: settings.slow_start.min_weight_percent / 100.0,
            decay_ns: nanos(settings.peak_ewma.decay) as f64,
            default_rtt_ns: nanos(settings.peak_ewma.default_rtt) as f64,
            error_penalty_ns: nanos(settings.peak_ewma.error_penalty) as f64,
            failed_ttl_ns: nanos(failed_ttl),
            panic_threshold: settings.panic_threshold,
            counters: LiveCounters::default(),
            metrics: ServiceMetrics::new(name),
            hooks: settings.hooks.clone(),
            snapshot: Arc::new(ArcSwap::from_pointee(Snapshot::empty())),
            ejected: AtomicUsize::new(0),
            ramping_until: AtomicU64::new(0),
        });
        let retry = Arc::new(LbRetryPolicy::new(
            settings.retry.clone(),
            Arc::downgrade(&shared),
            seed ^ 0x5EED,
        ));
        let lb = ServiceLb {
            shared,
            supplier: settings.supplier,
            policy: settings.policy,
            filters: settings.filters,
            rng: Rng::new(seed),
            rebuilding: AtomicBool::new(false),
            last_chosen: AtomicU64::new(u64::MAX),
            retry,
        };
        lb.refresh();
        lb
    }

    /// Attempts in flight now: the sum of the instances' in-flight counts, over the listed
    /// instances and those that left the list with attempts still in flight.
    pub(crate) fn in_flight(&self) -> u64 {
        let snap = self.shared.snapshot.load();
        snap.stats
            .iter()
            .chain(snap.retired.iter())
            .map(|s| u64::from(s.in_flight()))
            .sum()
    }

    /// The supplier this service reads, to listen to its changes.
    pub(crate) fn supplier(&self) -> Option<&Arc<dyn InstanceSupplier>> {
        self.supplier.as_ref()
    }

    /// Rebuilds the snapshot if the supplier's version moved. Only one caller rebuilds at a
    /// time; the others keep picking from the current snapshot meanwhile.
    pub(crate) fn refresh(&self) {
        let Some(supplier) = &self.supplier else {
            return;
        };
        let version = supplier.version();
        let current = self.shared.snapshot.load();
        if current.version == version {
            return;
        }
        let first = current.version == u64::MAX;
        if !first && self.rebuilding.swap(true, Ordering::Acquire) {
            return;
        }
        let instances = supplier.instances(&self.shared.name);
        let next = Snapshot::build(
            version,
            instances,
            &current,
            &self.shared,
            self.policy,
            &self.filters,
            &self.rng,
        );
        drop(current);
        self.shared.snapshot.store(Arc::new(next));
        if !first {
            self.rebuilding.store(false, Ordering::Release);
        }
    }

    fn discard(&self, error: Error) -> Error {
        LiveCounters::bump(&self.shared.counters.discard);
        self.shared.metrics.discarded();
        if !self.shared.hooks.is_empty() {
            let completion = Completion {
                service: &self.shared.name,
                instance: None,
                status: CompletionStatus::Discard,
                outcome: None,
                elapsed: std::time::Duration::ZERO,
            };
            for hook in self.shared.hooks.iter() {
                hook.on_complete(&completion);
            }
        }
        error
    }

    pub(crate) fn choose(&self, req: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        for hook in self.shared.hooks.iter() {
            hook.on_start(&self.shared.name);
        }
        let published = &self.shared.snapshot;
        let current = |snap: &Snapshot| {
            self.supplier
                .as_ref()
                .is_none_or(|s| s.version() == snap.version)
        };
        let seed = || self.rng.next_u64();
        snapshot_cache::with_current(published, seed, |snap, rng| {
            if current(snap) {
                return self.choose_from(snap, rng, req);
            }
            // The supplier moved on: rebuild (or, while another caller rebuilds, pick from the
            // snapshot still published). The thread's cache catches up on its next pick.
            self.refresh();
            self.choose_from(&published.load(), rng, req)
        })
    }

    fn choose_from(
        &self,
        snap: &Snapshot,
        rng: &LocalRng,
        req: &ChooseRequest<'_>,
    ) -> Result<Chosen, Error> {
        if snap.stats.is_empty() {
            let reason = if self.supplier.is_none() {
                "no instance supplier configured"
            } else if snap.known {
                "none registered"
            } else {
                "none registered (unknown to discovery)"
            };
            return Err(self.discard(Error::no_instance(req.service, reason)));
        }
        let cx = PickContext {
            clock: &self.shared.clock,
            now_ns: Cell::new(0),
            rng,
        };
        match self.pick(snap, req, &cx) {
            Some(index) => Ok(self.start(snap, index)),
            None => Err(self.discard(Error::no_instance(
                req.service,
                "all filtered out or ejected",
            ))),
        }
    }

    fn start(&self, snap: &Snapshot, index: usize) -> Chosen {
        let stats = &snap.stats[index];
        let attempt: Arc<dyn InstanceHandle> = stats.attempt();
        if self.filters.same_instance {
            self.last_chosen
                .store(pack(snap.version, index), Ordering::Relaxed);
        }
        for hook in self.shared.hooks.iter() {
            hook.on_start_request(&self.shared.name, &stats.instance);
        }
        Chosen::from_handle(attempt)
    }

    fn tried(&self, snap: &Snapshot, index: usize, req: &ChooseRequest<'_>) -> bool {
        let id = snap.instance(index).instance_id_arc();
        req.tried.iter().any(|t| Arc::ptr_eq(t, id) || **t == **id)
    }

    fn ejected(&self, snap: &Snapshot, index: usize, cx: &PickContext<'_>) -> bool {
        let stats = &snap.stats[index];
        stats.ejection_pending_fast() && stats.is_ejected(cx.now(), &self.shared)
    }

    fn pick(
        &self,
        snap: &Snapshot,
        req: &ChooseRequest<'_>,
        cx: &PickContext<'_>,
    ) -> Option<usize> {
        // Exact instances first: the retry policy's same-instance retry, then stickiness.
        if let Some(id) = req.same_instance {
            if let Some(&i) = snap.by_id.get(id) {
                return Some(i as usize);
            }
        }
        if let Some(sticky) = &self.filters.sticky {
            if let Some(&i) =
                filter::cookie(req.headers, &sticky.cookie).and_then(|id| snap.by_id.get(id))
            {
                let i = i as usize;
                if !self.tried(snap, i, req) && !self.ejected(snap, i, cx) {
                    return Some(i);
                }
            }
        }
        if self.filters.same_instance {
            let (version, i) = unpack(self.last_chosen.load(Ordering::Relaxed));
            if version == snap.version as u32
                && i < snap.stats.len()
                && !self.tried(snap, i, req)
                && !self.ejected(snap, i, cx)
            {
                return Some(i);
            }
        }

        // Narrow the candidates filter by filter; a filter that matches nothing is skipped.
        let mut narrowing = Narrowing {
            base: &snap.all,
            narrowed: false,
            preds: [None; 4],
            slot: 0,
        };
        if let (Some(zone), Some((inside, outside))) = (&self.filters.zone, &snap.zone) {
            if !inside.is_empty() {
                let failed = zone.failover
                    && inside
                        .members
                        .iter()
                        .all(|&i| snap.stats[i as usize].recently_failed(cx.now()));
                let (view, pred) = if failed && !outside.is_empty() {
                    (outside, Pred::InZone(&zone.zone, false))
                } else {
                    (inside, Pred::InZone(&zone.zone, true))
                };
                narrowing.apply(snap, view, pred);
            }
        }
        if let Some(routing) = &self.filters.version {
            let wanted =
                filter::header(req.headers, &routing.header).or(routing.default.as_deref());
            if let Some(wanted) = wanted {
                match snap.versions.get(wanted) {
                    Some(view) => {
                        let applied = narrowing.apply(snap, view, Pred::Meta(VERSION_KEY, wanted));
                        if !applied && routing.required {
                            return None;
                        }
                    }
                    None if routing.required => return None,
                    None => {}
                }
            }
        }
        if let Some(hints) = &self.filters.hints {
            if let Some(hint) =
                filter::header(req.headers, &hints.header).or(hints.default.as_deref())
            {
                if let Some(view) = snap.hints.get(hint) {
                    narrowing.apply(snap, view, Pred::Meta(HINT_KEY, hint));
                }
            }
        }
        if let (Some(canary), Some((canaries, stable))) = (&self.filters.canary, &snap.canary) {
            let flagged = canary
                .header
                .as_ref()
                .and_then(|h| filter::header(req.headers, h))
                .is_some_and(|v| !v.eq_ignore_ascii_case("false"));
            let to_canary = flagged
                || (canary.share_ppm > 0 && cx.rng.below(1_000_000) < canary.share_ppm as usize);
            let (view, pred) = if to_canary {
                (canaries, Pred::Canary(true))
            } else {
                (stable, Pred::Canary(false))
            };
            narrowing.apply(snap, view, pred);
        }

        // Borrowed, not moved out: moving the predicates would copy them on every pick.
        let base = narrowing.base;
        let preds = &narrowing.preds[..narrowing.slot];
        let listed = snap.stats.len();
        let ejected = self.shared.ejected.load(Ordering::Relaxed);
        let panic = ejected > 0 && (ejected as f64) >= listed as f64 * self.shared.panic_threshold;
        if panic {
            LiveCounters::bump(&self.shared.counters.panic);
        }
        let accept = |i: usize, relax_ejection: bool, relax_tried: bool| {
            preds.iter().flatten().all(|p| p.holds(snap.instance(i)))
                && (relax_tried || req.tried.is_empty() || !self.tried(snap, i, req))
                && (relax_ejection || !self.ejected(snap, i, cx))
        };

        // Fast path: the policy's own pick, re-drawn a few times if it lands on an instance
        // that is tried, ejected or still ramping up.
        let ramping = self.ramping(cx);
        for _ in 0..FAST_TRIES {
            let Some(i) = self.policy_pick(snap, base, cx, |i| accept(i, panic, false)) else {
                continue;
            };
            if ramping && !self.passes_ramp(snap, i, cx) {
                continue;
            }
            return Some(i);
        }
        // Slow path: scan the candidates, relaxing ejection (panic), then already-tried.
        for (relax_ejection, relax_tried) in [(panic, false), (true, false), (true, true)] {
            let eligible = |i: usize| accept(i, relax_ejection, relax_tried);
            if let Some(i) = self.scan_pick(snap, base, cx, eligible) {
                return Some(i);
            }
        }
        None
    }

    fn ramping(&self, cx: &PickContext<'_>) -> bool {
        let until = self.shared.ramping_until.load(Ordering::Relaxed);
        if until == 0 {
            return false;
        }
        if cx.now() >= until {
            let _ = self.shared.ramping_until.compare_exchange(
                until,
                0,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            return false;
        }
        true
    }

    fn passes_ramp(&self, snap: &Snapshot, i: usize, cx: &PickContext<'_>) -> bool {
        let factor = snap.stats[i].ramp_factor(
            cx.now(),
            self.shared.slow_start_window_ns,
            self.shared.slow_start_min,
        );
        factor >= 1.0 || cx.rng.unit() < factor
    }

    /// One pick of the policy over `view`, if it lands on an eligible instance. Two-choice
    /// policies take the better eligible candidate of their pair.
    fn policy_pick(
        &self,
        snap: &Snapshot,
        view: &View,
        cx: &PickContext<'_>,
        eligible: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let len = view.len();
        if len == 0 {
            return None;
        }
        let pos = match self.policy {
            Policy::RoundRobin => view.next_round_robin(),
            Policy::Random => cx.rng.below(len),
            Policy::Weighted => view.next_weighted(),
            Policy::LeastRequest | Policy::PeakEwma => {
                if len == 1 {
                    0
                } else {
                    let (a, b) = cx.rng.pair_below(len);
                    let (ia, ib) = (view.at(a), view.at(b));
                    return match (eligible(ia), eligible(ib)) {
                        (true, true) => Some(self.better(snap, ia, ib, cx)),
                        (true, false) => Some(ia),
                        (false, true) => Some(ib),
                        (false, false) => None,
                    };
                }
            }
        };
        let i = view.at(pos);
        eligible(i).then_some(i)
    }

    /// The less loaded of two instances (the first on a tie).
    fn better(&self, snap: &Snapshot, a: usize, b: usize, cx: &PickContext<'_>) -> usize {
        let (sa, sb) = (&snap.stats[a], &snap.stats[b]);
        let a_wins = match self.policy {
            Policy::PeakEwma => sa.peak_ewma_at_most(
                sa.in_flight(),
                sb,
                sb.in_flight(),
                || cx.now(),
                self.shared.decay_ns,
            ),
            _ => sa.in_flight() <= sb.in_flight(),
        };
        if a_wins {
            a
        } else {
            b
        }
    }

    /// Picks among the eligible members of `view` by scanning it: O(n), used only when the
    /// fast path kept landing on ineligible instances.
    fn scan_pick(
        &self,
        snap: &Snapshot,
        view: &View,
        cx: &PickContext<'_>,
        eligible: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let members = || {
            view.members
                .iter()
                .map(|&m| m as usize)
                .filter(|&i| eligible(i))
        };
        match self.policy {
            Policy::Weighted => {
                let total: u64 = members().map(|i| u64::from(snap.weights[i])).sum();
                if total == 0 {
                    return None;
                }
                let mut target = ((u128::from(cx.rng.next_u64()) * u128::from(total)) >> 64) as u64;
                for i in members() {
                    let w = u64::from(snap.weights[i]);
                    if target < w {
                        return Some(i);
                    }
                    target -= w;
                }
                None
            }
            Policy::LeastRequest | Policy::PeakEwma => {
                let count = members().count();
                match count {
                    0 => None,
                    1 => members().next(),
                    _ => {
                        let (a, b) = cx.rng.pair_below(count);
                        let ia = members().nth(a)?;
                        let ib = members().nth(b)?;
                        Some(self.better(snap, ia, ib, cx))
                    }
                }
            }
            Policy::RoundRobin | Policy::Random => {
                let count = members().count();
                if count == 0 {
                    return None;
                }
                members().nth(cx.rng.below(count))
            }
        }
    }
}

/// The candidates as the routing filters narrow them: the first filter that matches something
/// becomes the base view; later ones become predicates when the candidates contain a match.
struct Narrowing<'v> {
    base: &'v View,
    narrowed: bool,
    preds: [Option<Pred<'v>>; 4],
    slot: usize,
}

impl<'v> Narrowing<'v> {
    /// Applies one filter; returns whether it was applied (a filter matching nothing is not).
    fn apply(&mut self, snap: &Snapshot, view: &'v View, pred: Pred<'v>) -> bool {
        if view.is_empty() {
            return false;
        }
        if !self.narrowed {
            self.base = view;
            self.narrowed = true;
            return true;
        }
        let earlier = &self.preds[..self.slot];
        let any = self.base.members.iter().any(|&m| {
            let instance = snap.instance(m as usize);
            pred.holds(instance) && earlier.iter().flatten().all(|p| p.holds(instance))
        });
        if any && self.slot < self.preds.len() {
            self.preds[self.slot] = Some(pred);
            self.slot += 1;
            return true;
        }
        false
    }
}

fn pack(version: u64, index: usize) -> u64 {
    (version << 32) | (index as u64 & 0xFFFF_FFFF)
}

fn unpack(packed: u64) -> (u32, usize) {
    ((packed >> 32) as u32, (packed & 0xFFFF_FFFF) as usize)
}
