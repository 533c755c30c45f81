//! Every setting of the soak in one place: short Eureka intervals so a run sees many cycles, the
//! client settings a demanding user would choose (RELIABILITY.md quotes them), what a run is asked
//! to do, its phases, and the bounds its checks hold it to.

use std::time::Duration;

use feign_core::resilience::AdaptiveLimitConfig;
use feign_core::{HedgingConfig, Options};
use feign_lb::{Ejection, Policy, RetryBudget, RetryConfig};

/// Heartbeat interval of every instance.
pub(crate) const LEASE_RENEWAL: Duration = Duration::from_secs(1);
/// Lease of every instance: three missed heartbeats.
pub(crate) const LEASE_EXPIRATION: Duration = Duration::from_secs(3);
/// How often the registries evict expired leases.
pub(crate) const EVICTION_INTERVAL: Duration = Duration::from_secs(1);
/// How long the registries keep changes for delta fetches: thirty fetches' worth.
pub(crate) const DELTA_RETENTION: Duration = Duration::from_secs(30);
/// How soon a registry passes a change on to its peers: a tenth of the fetch interval, so that
/// the time a restarted instance takes to reach a caller of another node shows push discovery.
pub(crate) const REPLICATION_DELAY: Duration = Duration::from_millis(100);
/// How often the callers fetch the registry (delta).
pub(crate) const FETCH_INTERVAL: Duration = Duration::from_secs(1);
/// Eureka client connect timeout (registration and discovery).
pub(crate) const EUREKA_CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
/// Eureka client read timeout: above the slow registry's added latency.
pub(crate) const EUREKA_READ_TIMEOUT: Duration = Duration::from_secs(2);

/// Latency the slow registry adds to every answer.
pub(crate) const REGISTRY_LATENCY: Duration = Duration::from_millis(800);
/// Latency a slow instance adds to every answer: under the read timeout, so calls still succeed.
pub(crate) const INSTANCE_LATENCY: Duration = Duration::from_millis(250);

/// Connect timeout of the calls.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_millis(250);
/// Read timeout of each attempt: what a blackholed or half-open instance costs a call.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_millis(750);
/// Deadline of a whole call, retries included.
pub(crate) const TOTAL_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a TLS instance waits for a caller's handshake.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long an idle pooled connection is kept.
pub(crate) const POOL_IDLE: Duration = Duration::from_secs(10);

/// The callers' per-call options.
pub(crate) fn options() -> Options {
    Options::new()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .total_timeout(TOTAL_TIMEOUT)
}

/// A GET with no answer after the 95th percentile of its method's recent latency (at least
/// 50 ms; 200 ms until 100 calls were seen) goes to a second instance as well, paid for by the
/// hedge budget: a slow, blackholed or half-open instance costs a GET that long, not its read
/// timeout.
pub(crate) fn hedging() -> HedgingConfig {
    HedgingConfig::after(Duration::from_millis(200))
        .percentile(0.95)
        .min_delay(Duration::from_millis(50))
}

/// An adaptive concurrency limit over each caller, measured every 100 ms: from 256 calls in
/// flight, down to 128 as the faults' latency shows, up to 1,024. A caller keeps about ten calls
/// in flight at 150 calls/s, so the limit sheds only when the process itself stalls for most of
/// a second, which the checks then count as failed calls.
pub(crate) fn adaptive_limit() -> AdaptiveLimitConfig {
    AdaptiveLimitConfig::default()
        .initial_limit(256)
        .min_limit(128)
        .max_limit(1024)
}

/// Peak-EWMA: a slow or failing instance repels traffic before it is ejected.
pub(crate) const POLICY: Policy = Policy::PeakEwma;

/// Up to three other instances after a failure (idempotent calls; any call when nothing was
/// sent), under a budget of half the calls plus 20 a second.
pub(crate) fn retry() -> RetryConfig {
    RetryConfig::new()
        .max_retries_on_same_instance(0)
        .max_retries_on_next_instance(3)
        .budget(RetryBudget::new().percent(50.0).min_per_second(20))
}

/// A refused connection ejects at once, three failures in a row too; for 5 s, doubling up to
/// 30 s; up to half the instances at a time.
pub(crate) fn ejection() -> Ejection {
    Ejection::new()
        .eject_on_connect_failure(true)
        .consecutive_failures(3)
        .base_time(Duration::from_secs(5))
        .max_time(Duration::from_secs(30))
        .max_percent(50.0)
}

/// How long the registries may take to agree once the faults stop.
pub(crate) const CONVERGENCE_BOUND: Duration = Duration::from_secs(20);

/// Calls each phase must start, as a share of the rate over the time the load was not paused
/// (the load is open-loop: it starts calls on schedule whatever the earlier ones do).
pub(crate) const PHASE_CALLS_FLOOR: f64 = 0.9;

/// Requests each instance slot must answer, as a share of its service's mean per slot: a slot
/// stopped, aborted, faulting or ejected part of the time still takes a good part of its share
/// (about 40 % at least in two-minute runs).
pub(crate) const SLOT_SHARE_FLOOR: f64 = 0.1;

/// POSTs that may fail while faults run, as a share of the POSTs of that phase. A POST sent to
/// a blackholed or half-open instance, or cut by a reset, cannot be retried once it may have
/// been executed; the balancer ejects such an instance after three failures or Peak-EWMA turns
/// away from it first, so only a few POSTs meet each fault.
pub(crate) const POST_FAILURE_BOUND: f64 = 0.02;

/// The median time a restarted instance may take to reach its caller: the replication to the
/// caller's node and little more. Polling every [`FETCH_INTERVAL`] would add half of it on
/// average; push discovery answers at once.
pub(crate) const DISCOVERY_BOUND: Duration = Duration::from_millis(300);

/// Windows each adaptive limit must have measured (it closes one at most every 100 ms).
pub(crate) const ADAPTIVE_WINDOWS_FLOOR: u64 = 10;

/// How soon after an edit of the configuration the calls must carry it.
pub(crate) const CONFIG_SEEN_BOUND: Duration = Duration::from_secs(5);

/// How far the end's resource readings may be from the start's.
pub(crate) const RESOURCE_TOLERANCE: f64 = 0.10;

/// What resident memory may end above the start besides [`RESOURCE_TOLERANCE`], whichever is
/// more: the pages the allocator keeps after the fault phase's peak (new instances, TLS
/// handshakes, retried and hedged calls), which can hold RSS above 10 % of a process this small
/// on a quiet machine while the live heap goes back to its start reading; a leak shows first
/// in the live heap, counted exactly and held to [`RESOURCE_TOLERANCE`].
pub(crate) const RSS_ALLOWANCE_KIB: u64 = 4 * 1024;

/// How long reading the resources takes: the calls in flight finish (within the total
/// timeout), the callers' idle connections expire (the pool reaps them up to twice their idle
/// time after their last use), then five readings.
pub(crate) const QUIET: Duration = Duration::from_secs(30);

/// What a run is asked to do.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The whole run.
    pub(crate) duration: Duration,
    /// Seeds the plan, the load's mix and every random choice of the stack.
    pub(crate) seed: u64,
    /// Calls per second, both services together.
    pub(crate) rate: u32,
}

impl Settings {
    /// The run's phases: warm-up, faults, settling.
    pub(crate) fn phases(&self) -> Phases {
        let d = self.duration;
        // Up to 120 s: past the 90 s an idle pooled connection of a Eureka client lives, so
        // a long run's start readings hold no connection left over from setting up.
        let warm_up = d
            .mul_f64(0.12)
            .clamp(Duration::from_secs(10), Duration::from_secs(120));
        let settle = d
            .mul_f64(0.3)
            .clamp(Duration::from_secs(35), Duration::from_secs(180));
        Phases {
            warm_up,
            faults_from: warm_up + QUIET,
            faults_to: d.saturating_sub(settle),
            end: d,
        }
    }
}

/// When each phase of a run begins and ends, from its start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Phases {
    /// End of the warm-up: the start resources are read then.
    pub(crate) warm_up: Duration,
    /// First fault.
    pub(crate) faults_from: Duration,
    /// No fault starts after this; the rest of the run settles.
    pub(crate) faults_to: Duration,
    /// End of the run.
    pub(crate) end: Duration,
}

/// The share `end` is above or below `start`.
pub(crate) fn drift(start: u64, end: u64) -> f64 {
    if start == 0 {
        return if end == 0 { 0.0 } else { f64::INFINITY };
    }
    (end as f64 - start as f64) / start as f64
}

/// Reads an atomic counter.
pub(crate) fn read(counter: &std::sync::atomic::AtomicU64) -> u64 {
    counter.load(std::sync::atomic::Ordering::Relaxed)
}
