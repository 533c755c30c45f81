//! One service's balancer: its snapshot, kept in step with the supplier, and the door a pick
//! comes in by (the pick itself is [`crate::pick`]).

use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Weak};

use arc_swap::ArcSwap;
use feign_core::resolve::{ChooseRequest, Chosen, InstanceHandle};
use feign_core::Error;

use crate::clock::{nanos, Clock};
use crate::config::{Ejection, PeakEwma, Policy, SlowStart};
use crate::context::PickContext;
use crate::filter::Filters;
use crate::lifecycle::{Completion, CompletionStatus, LifecycleHook, LiveCounters};
use crate::listed::Rebuilding;
use crate::metrics::ServiceMetrics;
use crate::pick::{LastChosen, Pick};
use crate::retry::LbRetryPolicy;
use crate::rng::{Draw, LocalRng, Rng};
use crate::snapshot::{Before, Snapshot};
use crate::snapshot_cache::{self, Published};
use crate::state::ServiceState;
use crate::InstanceSupplier;

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

impl Default for Settings {
    /// The built-in defaults, as [`crate::Builder`]'s setters document them.
    fn default() -> Self {
        Settings {
            supplier: None,
            policy: Policy::default(),
            filters: Filters::default(),
            ejection: Ejection::default(),
            slow_start: SlowStart::default(),
            peak_ewma: PeakEwma::default(),
            panic_threshold: 0.5,
            retry: crate::RetryConfig::default(),
            hooks: Arc::from(Vec::new()),
            seed: None,
        }
    }
}

/// A service's balancer.
pub(crate) struct ServiceLb {
    pub(crate) state: Arc<ServiceState>,
    /// Where the current snapshot is published.
    pub(crate) snapshot: Published,
    supplier: Option<Arc<dyn InstanceSupplier>>,
    policy: Policy,
    filters: Filters,
    rng: Rng,
    rebuilding: Rebuilding,
    last_chosen: LastChosen,
    pub(crate) retry: Arc<LbRetryPolicy>,
}

impl ServiceState {
    /// The state of a service with the default settings and no instances, for unit tests.
    #[cfg(test)]
    pub(crate) fn for_tests() -> Arc<ServiceState> {
        ServiceLb::new("svc", Settings::default(), Clock::new(), None).state
    }
}

impl ServiceLb {
    /// The balancer of service `name`; `replaced` is the snapshot of the same service in a
    /// balancer this one replaces (a live reload), whose instances' state it takes over.
    pub(crate) fn new(
        name: &str,
        settings: Settings,
        clock: Clock,
        replaced: Option<&Snapshot>,
    ) -> ServiceLb {
        let seed = settings.seed.unwrap_or_else(crate::rng::random_seed);
        let failed_ttl = settings
            .filters
            .zone
            .as_ref()
            .map(|z| z.failed_ttl)
            .unwrap_or_default();
        let snapshot: Published = Arc::new(ArcSwap::from_pointee(Snapshot::empty()));
        let roster: Weak<ArcSwap<Snapshot>> = Arc::downgrade(&snapshot);
        let state = Arc::new(ServiceState {
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
            tracks_latency: settings.policy == Policy::PeakEwma,
            counters: LiveCounters::default(),
            metrics: ServiceMetrics::new(name),
            hooks: settings.hooks.clone(),
            roster,
            ejected: AtomicUsize::new(0),
            ramping_until: AtomicU64::new(0),
        });
        let retry = Arc::new(LbRetryPolicy::new(
            settings.retry.clone(),
            Arc::downgrade(&state),
            seed ^ 0x5EED,
        ));
        let lb = ServiceLb {
            state,
            snapshot,
            supplier: settings.supplier,
            policy: settings.policy,
            filters: settings.filters,
            rng: Rng::new(seed),
            rebuilding: Rebuilding::default(),
            last_chosen: LastChosen::new(),
            retry,
        };
        lb.rebuild(replaced);
        lb
    }

    /// Attempts in flight now: the sum of the instances' in-flight counts, over the listed
    /// instances and those that left the list with attempts still in flight.
    pub(crate) fn in_flight(&self) -> u64 {
        let snap = self.snapshot.load();
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
        self.rebuild(None);
    }

    /// [`ServiceLb::refresh`], deriving the new snapshot from `replaced` (the same service's
    /// in a balancer this one replaces) rather than from the current one when given.
    fn rebuild(&self, replaced: Option<&Snapshot>) {
        let Some(supplier) = &self.supplier else {
            return;
        };
        let version = supplier.version();
        self.rebuilding.run(
            &self.snapshot,
            |current| current.version != version,
            |current| {
                let instances = supplier.instances(&self.state.name);
                let before = match replaced {
                    Some(replaced) => Before::Replaced(replaced),
                    None => Before::Own(current),
                };
                Snapshot::build(
                    version,
                    instances,
                    before,
                    &self.state,
                    self.policy,
                    &self.filters,
                    &self.rng,
                )
            },
        );
    }

    fn discard(&self, error: Error) -> Error {
        LiveCounters::bump(&self.state.counters.discard);
        self.state.metrics.discarded();
        if !self.state.hooks.is_empty() {
            let completion = Completion {
                service: &self.state.name,
                instance: None,
                status: CompletionStatus::Discard,
                outcome: None,
                elapsed: std::time::Duration::ZERO,
            };
            for hook in self.state.hooks.iter() {
                hook.on_complete(&completion);
            }
        }
        error
    }

    pub(crate) fn choose(&self, req: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        for hook in self.state.hooks.iter() {
            hook.on_start(&self.state.name);
        }
        let published = &self.snapshot;
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
            return Err(self.discard(Error::no_instance(req.call.service, reason)));
        }
        let pick = Pick {
            snap,
            req,
            cx: PickContext::new(&self.state.clock, rng),
            state: &self.state,
            policy: self.policy,
            filters: &self.filters,
            last_chosen: &self.last_chosen,
        };
        match pick.run() {
            Some(index) => Ok(self.start(snap, index)),
            None => Err(self.discard(Error::no_instance(
                req.call.service,
                "all filtered out or ejected",
            ))),
        }
    }

    fn start(&self, snap: &Snapshot, index: usize) -> Chosen {
        let stats = &snap.stats[index];
        let attempt: Arc<dyn InstanceHandle> = stats.attempt();
        if self.filters.same_instance {
            self.last_chosen.record(snap.version, index);
        }
        for hook in self.state.hooks.iter() {
            hook.on_start_request(&self.state.name, snap.instance(index));
        }
        Chosen::from_handle(attempt)
    }
}
