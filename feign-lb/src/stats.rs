//! Per-instance state in atomics: Peak-EWMA latency, consecutive failures, ejection deadline,
//! slow-start ramp (the in-flight count is its reference count, see [`crate::listed`]). It is
//! also the attempt's [`CallObserver`].
//!
//! The state belongs to an endpoint, an instance id at one address: a registry update that
//! changes anything else of the instance (its metadata, its zone, its weight) keeps it, and
//! only the instance's description moves on ([`InstanceStats::describe`]).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ::metrics::Gauge;
use arc_swap::{ArcSwap, Guard};
use feign_core::resolve::{AttemptOutcome, CallObserver, InstanceHandle};
use tokio::time::Instant;

use crate::clock::nanos;
use crate::lifecycle::{Completion, CompletionStatus, LiveCounters};
use crate::metrics::{self, InstanceMetrics};
use crate::state::ServiceState;
use crate::ServiceInstance;

/// One instance's live state, kept across snapshot rebuilds while the instance stays listed at
/// the same address, whatever else of it changes.
///
/// Laid out for the pick: everything a pick reads or writes of a candidate comes first and
/// shares one cache line (the struct is aligned to it, so no two instances share one either);
/// the instance itself and what only a completion touches follow.
#[repr(C, align(64))]
pub(crate) struct InstanceStats {
    /// Snapshots listing the instance (see [`crate::listed`]).
    pub(crate) listings: crate::sync::AtomicU32,
    ejected_until: AtomicU64,
    ewma_bits: AtomicU64,
    ewma_at: AtomicU64,
    ramp_start: AtomicU64,
    active: Gauge,
    // Read by completions, not by a pick.
    /// The endpoint: what an attempt is sent to, fixed for the life of the stats.
    base_url: Arc<str>,
    id: Arc<str>,
    /// The instance as the latest list describes it (its metadata may have changed since it
    /// was first listed), for lifecycle hooks.
    described: ArcSwap<ServiceInstance>,
    service: Arc<ServiceState>,
    consecutive_failures: AtomicU32,
    ejection_level: AtomicU32,
    failed_until: AtomicU64,
    metrics: InstanceMetrics,
}

// The pick's fields fit the first cache line.
const _: () = assert!(std::mem::offset_of!(InstanceStats, base_url) <= 64);

impl InstanceStats {
    /// State for a newly listed instance; `ramp_from` starts its slow start (0: none).
    pub(crate) fn new(
        instance: ServiceInstance,
        service: Arc<ServiceState>,
        default_rtt_ns: f64,
        ramp_from: u64,
    ) -> Self {
        InstanceStats {
            active: metrics::active_gauge(&instance),
            metrics: InstanceMetrics::new(&instance),
            base_url: instance.base_url().clone(),
            id: instance.instance_id_arc().clone(),
            described: ArcSwap::from_pointee(instance),
            service,
            listings: crate::sync::AtomicU32::new(0),
            ewma_bits: AtomicU64::new(default_rtt_ns.to_bits()),
            ewma_at: AtomicU64::new(0),
            consecutive_failures: AtomicU32::new(0),
            ejected_until: AtomicU64::new(0),
            ejection_level: AtomicU32::new(0),
            ramp_start: AtomicU64::new(ramp_from),
            failed_until: AtomicU64::new(0),
        }
    }

    /// The instance id.
    pub(crate) fn id(&self) -> &Arc<str> {
        &self.id
    }

    /// Whether `instance` is this endpoint: the same id at the same address (scheme, host and
    /// port). Such an update of the instance keeps its state.
    pub(crate) fn is_endpoint_of(&self, instance: &ServiceInstance) -> bool {
        *self.id == *instance.instance_id() && *self.base_url == **instance.base_url()
    }

    /// Takes `instance`, an update of this endpoint, as its description.
    pub(crate) fn describe(&self, instance: &ServiceInstance) {
        if **self.described.load() != *instance {
            self.described.store(Arc::new(instance.clone()));
        }
    }

    /// The instance as last described.
    pub(crate) fn description(&self) -> Guard<Arc<ServiceInstance>> {
        self.described.load()
    }

    /// An attempt to the instance starts: the gauge follows (the count is the attempt's
    /// reference).
    pub(crate) fn started(&self) {
        self.active.increment(1.0);
    }

    /// Takes over the state `replaced` (this endpoint's stats in the balancer a reload
    /// replaced, on the same clock) has at `now`, as far as this service's settings keep it:
    /// the ejection and its level when ejection is on, the latency estimate when this policy
    /// reads it and one was measured, the slow-start ramp, the failure counts.
    pub(crate) fn take_state_of(&self, replaced: &InstanceStats, now: u64) {
        let copy = |to: &AtomicU64, from: &AtomicU64| {
            to.store(from.load(Ordering::Relaxed), Ordering::Relaxed);
        };
        let state = &*self.service;
        if state.ejection.enabled && replaced.ejection_pending(now) {
            copy(&self.ejected_until, &replaced.ejected_until);
        }
        if state.ejection.enabled {
            let level = replaced.ejection_level.load(Ordering::Relaxed);
            self.ejection_level.store(level, Ordering::Relaxed);
        }
        if state.tracks_latency && replaced.ewma_at.load(Ordering::Relaxed) != 0 {
            copy(&self.ewma_bits, &replaced.ewma_bits);
            copy(&self.ewma_at, &replaced.ewma_at);
        }
        let ramp_start = replaced.ramp_start.load(Ordering::Relaxed);
        self.start_ramp(ramp_start);
        if ramp_start != 0 {
            state.note_ramp(ramp_start);
        }
        let failures = replaced.consecutive_failures.load(Ordering::Relaxed);
        self.consecutive_failures.store(failures, Ordering::Relaxed);
        copy(&self.failed_until, &replaced.failed_until);
    }

    /// Whether the instance is ejected at `now`. An expired ejection is cleared here (once),
    /// keeping the service's ejected count in step.
    pub(crate) fn is_ejected(&self, now: u64, state: &ServiceState) -> bool {
        let until = self.ejected_until.load(Ordering::Relaxed);
        if until == 0 {
            return false;
        }
        if now < until {
            return true;
        }
        if self
            .ejected_until
            .compare_exchange(until, 0, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            // Saturating: a rebuild recounting at the same moment may have left this one out.
            let _ = state
                .ejected
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
        false
    }

    /// Whether the instance is ejected at `now`, for a rebuild that recounts the service's
    /// ejections: an expired deadline is cleared here, so that no later pick subtracts it from
    /// the new count a second time.
    pub(crate) fn recount_ejection(&self, now: u64) -> bool {
        let until = self.ejected_until.load(Ordering::Relaxed);
        if until != 0 && now >= until {
            let _ =
                self.ejected_until
                    .compare_exchange(until, 0, Ordering::Relaxed, Ordering::Relaxed);
            return false;
        }
        until != 0
    }

    /// Whether an ejection deadline is set at all: one load, no clock.
    pub(crate) fn ejection_pending_fast(&self) -> bool {
        self.ejected_until.load(Ordering::Relaxed) != 0
    }

    /// Whether the deadline is set, without clearing it (for counting).
    pub(crate) fn ejection_pending(&self, now: u64) -> bool {
        let until = self.ejected_until.load(Ordering::Relaxed);
        until != 0 && now < until
    }

    /// Whether a failure was seen within the zone-failover memory.
    pub(crate) fn recently_failed(&self, now: u64) -> bool {
        now < self.failed_until.load(Ordering::Relaxed)
    }

    /// The share of its normal traffic a ramping instance gets at `now`, in (0, 1]; 1 when
    /// not ramping.
    pub(crate) fn ramp_factor(&self, now: u64, window_ns: u64, min_factor: f64) -> f64 {
        let start = self.ramp_start.load(Ordering::Relaxed);
        if start == 0 || window_ns == 0 || now >= start.saturating_add(window_ns) {
            return 1.0;
        }
        let elapsed = now.saturating_sub(start).max(1) as f64;
        (elapsed / window_ns as f64).max(min_factor)
    }

    /// Starts (or restarts) the slow-start ramp at `at`.
    pub(crate) fn start_ramp(&self, at: u64) {
        self.ramp_start.store(at, Ordering::Relaxed);
    }

    /// The Peak-EWMA latency estimate in nanoseconds, decayed to `now`.
    pub(crate) fn latency_estimate(&self, now: u64, decay_ns: f64) -> f64 {
        let estimate = f64::from_bits(self.ewma_bits.load(Ordering::Relaxed));
        let at = self.ewma_at.load(Ordering::Relaxed);
        if at == 0 || now <= at {
            return estimate;
        }
        estimate * exp_neg((now - at) as f64 / decay_ns)
    }

    /// The Peak-EWMA cost: latency estimate times (in-flight + 1).
    pub(crate) fn peak_ewma_cost(&self, in_flight: u32, now: u64, decay_ns: f64) -> f64 {
        self.latency_estimate(now, decay_ns) * (f64::from(in_flight) + 1.0)
    }

    /// Whether this instance's Peak-EWMA cost is at most `other`'s, without reading the clock
    /// when it can: both estimates decay by the same factor from any moment after both were
    /// last updated, so the comparison depends on the gap between their updates and not on
    /// the current time. An instance never observed does not decay, so then `now` is read.
    pub(crate) fn peak_ewma_at_most(
        &self,
        in_flight: u32,
        other: &InstanceStats,
        other_in_flight: u32,
        now: impl Fn() -> u64,
        decay_ns: f64,
    ) -> bool {
        let (at, other_at) = (
            self.ewma_at.load(Ordering::Relaxed),
            other.ewma_at.load(Ordering::Relaxed),
        );
        if (at == 0) != (other_at == 0) {
            let t = now();
            return self.peak_ewma_cost(in_flight, t, decay_ns)
                <= other.peak_ewma_cost(other_in_flight, t, decay_ns);
        }
        let undecayed = |s: &InstanceStats, in_flight: u32| {
            f64::from_bits(s.ewma_bits.load(Ordering::Relaxed)) * (f64::from(in_flight) + 1.0)
        };
        let (cost, other_cost) = (
            undecayed(self, in_flight),
            undecayed(other, other_in_flight),
        );
        if at == other_at {
            return cost <= other_cost;
        }
        // cost(t) = undecayed * e^(-(t - at) / decay); the ratio of two costs is the ratio of
        // the undecayed ones times e^((at - other_at) / decay), whatever t. Clamped so that a
        // very old estimate compares as zero rather than as NaN.
        let gap = (other_at as f64 - at as f64) / decay_ns;
        cost * exp_neg(gap.clamp(-700.0, 700.0)) <= other_cost
    }

    /// Folds a latency sample into the Peak-EWMA estimate, stamped at `now()`; nothing, and no
    /// clock reading, unless the service's policy reads the estimate.
    fn observe_latency(&self, state: &ServiceState, sample_ns: f64, now: impl FnOnce() -> u64) {
        if !state.tracks_latency {
            return;
        }
        let now = now();
        let previous_at = self.ewma_at.swap(now, Ordering::Relaxed);
        let weight = if previous_at == 0 || now <= previous_at {
            0.0
        } else {
            exp_neg((now - previous_at) as f64 / state.decay_ns)
        };
        let _ = self
            .ewma_bits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                let estimate = f64::from_bits(bits);
                let next = if sample_ns > estimate {
                    sample_ns // the peak: jump up at once
                } else {
                    estimate * weight + sample_ns * (1.0 - weight)
                };
                Some(next.to_bits())
            });
    }

    fn record_success(&self) {
        // Read before written: the common case writes nothing.
        if self.consecutive_failures.load(Ordering::Relaxed) != 0 {
            self.consecutive_failures.store(0, Ordering::Relaxed);
        }
        if self.failed_until.load(Ordering::Relaxed) != 0 {
            self.failed_until.store(0, Ordering::Relaxed);
        }
    }

    fn record_failure(&self, state: &ServiceState, now: u64, connect: bool) {
        let failures = self.consecutive_failures.fetch_add(1, Ordering::Relaxed) + 1;
        self.failed_until
            .store(now.saturating_add(state.failed_ttl_ns), Ordering::Relaxed);
        let ejection = &state.ejection;
        if ejection.enabled
            && ((connect && ejection.eject_on_connect_failure)
                || failures >= ejection.consecutive_failures)
        {
            self.try_eject(state, now);
        }
    }

    fn try_eject(&self, state: &ServiceState, now: u64) {
        if self.ejection_pending(now) {
            return;
        }
        if !state.may_eject(now) {
            return;
        }
        let ejection = &state.ejection;
        let base = nanos(ejection.base_time);
        let max = nanos(ejection.max_time).max(base);
        let previous_end = self.ramp_start.load(Ordering::Relaxed);
        // An instance healthy for longer than the longest ejection starts over at the base time.
        if previous_end != 0 && now.saturating_sub(previous_end) > max {
            self.ejection_level.store(0, Ordering::Relaxed);
        }
        let level = self.ejection_level.fetch_add(1, Ordering::Relaxed).min(20);
        let length = base.saturating_mul(1u64 << level).min(max);
        let until = now.saturating_add(length).max(1);
        if self.ejected_until.swap(until, Ordering::Relaxed) == 0 {
            state.ejected.fetch_add(1, Ordering::Relaxed);
        }
        self.consecutive_failures.store(0, Ordering::Relaxed);
        self.start_ramp(until);
        state.note_ramp(until);
        LiveCounters::bump(&state.counters.ejections);
        tracing::warn!(
            service = %state.name,
            instance = %self.id,
            seconds = Duration::from_nanos(length).as_secs_f64(),
            "instance ejected"
        );
    }
}

impl InstanceHandle for InstanceStats {
    fn base_url(&self) -> &Arc<str> {
        &self.base_url
    }

    fn instance_id(&self) -> &Arc<str> {
        &self.id
    }
}

impl InstanceStats {
    /// Reports how an attempt ended. `now` gives the time it ended, and is called only when the
    /// report needs it: for the latency estimate (Peak-EWMA only) and on a failure.
    fn complete(&self, outcome: &AttemptOutcome<'_>, elapsed: Duration, now: impl Fn() -> u64) {
        self.active.decrement(1.0);
        self.metrics.completed(outcome);
        let state = &*self.service;
        let counters = &state.counters;
        let sample = nanos(elapsed) as f64;
        let penalized = sample.max(state.error_penalty_ns);
        let status = match outcome {
            AttemptOutcome::Response(code) if code.is_server_error() => {
                let now = now();
                self.observe_latency(state, penalized, || now);
                self.record_failure(state, now, false);
                LiveCounters::bump(&counters.server_errors);
                LiveCounters::bump(&counters.success);
                CompletionStatus::Success
            }
            AttemptOutcome::Response(code) => {
                if code.is_client_error() {
                    LiveCounters::bump(&counters.client_errors);
                }
                self.observe_latency(state, sample, now);
                self.record_success();
                LiveCounters::bump(&counters.success);
                CompletionStatus::Success
            }
            AttemptOutcome::Failed(error) => {
                let now = now();
                self.observe_latency(state, penalized, || now);
                self.record_failure(state, now, error.is_connect());
                LiveCounters::bump(&counters.failed);
                CompletionStatus::Failed
            }
            _ => {
                LiveCounters::bump(&counters.discard);
                state.metrics.discarded();
                CompletionStatus::Discard
            }
        };
        if !state.hooks.is_empty() {
            let instance = self.description();
            let completion = Completion {
                service: &state.name,
                instance: Some(&instance),
                status,
                outcome: Some(outcome),
                elapsed,
            };
            for hook in state.hooks.iter() {
                hook.on_complete(&completion);
            }
        }
    }
}

/// e^-x, the share of a Peak-EWMA estimate left after x decay periods (x < 0 when comparing
/// two estimates). Updates mostly come a small fraction of a period apart (with the default
/// 10 s decay, |x| < 1/64 is anything under 156 ms), and there the Taylor cubic replaces the
/// libm call: its relative error is below |x|^4/24 < 2.6e-9 (the first omitted term bounds the
/// alternating series for x > 0; for x < 0 the remainder is at most that times e^|x|, which
/// the result carries too). Written in Estrin's form, so its two halves are computed side by
/// side.
fn exp_neg(x: f64) -> f64 {
    const SMALL: f64 = 1.0 / 64.0;
    if x.abs() < SMALL {
        (1.0 - x) + x * x * (0.5 - x * (1.0 / 6.0))
    } else {
        (-x).exp()
    }
}

impl CallObserver for InstanceStats {
    fn on_complete(&self, outcome: &AttemptOutcome<'_>, elapsed: Duration) {
        self.complete(outcome, elapsed, || self.service.clock.now());
    }

    fn on_complete_at(&self, outcome: &AttemptOutcome<'_>, elapsed: Duration, ended: Instant) {
        self.complete(outcome, elapsed, || self.service.clock.at(ended));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listed::Listed;

    fn stats(estimate_ns: f64, at: u64) -> InstanceStats {
        let s = InstanceStats::new(
            ServiceInstance::new("svc", "127.0.0.1", 80),
            ServiceState::for_tests(),
            estimate_ns,
            0,
        );
        s.ewma_at.store(at, Ordering::Relaxed);
        s
    }

    #[test]
    fn the_cubic_stays_within_its_error_bound_of_exp() {
        for i in -1000..=1000 {
            let x = f64::from(i) / 64_000.0;
            let (approx, exact) = (exp_neg(x), (-x).exp());
            assert!(
                ((approx - exact) / exact).abs() < 2.6e-9,
                "{x}: {approx} vs {exact}"
            );
        }
        assert_eq!(exp_neg(1.0), (-1.0f64).exp());
    }

    #[test]
    fn peak_ewma_comparison_without_the_clock_agrees_with_the_costs() {
        let decay = 10e9;
        let now = 1_000_000_000_000u64;
        let cases = [
            (5e6, now - 1_000_000_000, 0, 5e6, now - 1_000_000_000, 0),
            (5e6, now - 1_000_000_000, 3, 8e6, now - 2_000_000_000, 1),
            (50e6, now - 30_000_000_000, 0, 5e6, now - 1, 0),
            (5e6, 0, 0, 5e6, now - 5_000_000_000, 0),
            (1e6, now - 20_000_000_000, 2, 30e6, 0, 0),
            (1e6, 0, 4, 2e6, 0, 1),
            (0.0, now - 1, 0, 1e6, now - 900_000_000_000, 0),
        ];
        for (ea, ta, fa, eb, tb, fb) in cases {
            let (a, b) = (stats(ea, ta), stats(eb, tb));
            for ((x, fx), (y, fy)) in [((&a, fa), (&b, fb)), ((&b, fb), (&a, fa))] {
                let expected = x.peak_ewma_cost(fx, now, decay) <= y.peak_ewma_cost(fy, now, decay);
                assert_eq!(
                    x.peak_ewma_at_most(fx, y, fy, || now, decay),
                    expected,
                    "{ea} {ta} {fa} / {eb} {tb} {fb}"
                );
            }
        }
    }

    /// The in-flight count is the references beyond the listings (see [`crate::listed`]).
    #[test]
    fn attempts_count_until_dropped_and_listings_do_not() {
        let first = Listed::new(Arc::new(stats(1e6, 0)));
        let second = first.clone();
        assert_eq!(first.in_flight(), 0);
        let attempts: Vec<_> = (0..3).map(|_| first.attempt()).collect();
        assert_eq!(second.in_flight(), 3);
        drop(first);
        assert_eq!(second.in_flight(), 3);
        drop(attempts);
        assert_eq!(second.in_flight(), 0);
    }
}
