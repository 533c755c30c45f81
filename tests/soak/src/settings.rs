//! Every setting of the soak in one place: short Eureka intervals so a run sees many cycles, and
//! the client settings a demanding user would choose. RELIABILITY.md quotes them.

use std::time::Duration;

use feign_core::Options;
use feign_lb::{Ejection, Policy, RetryBudget, RetryConfig};

/// Heartbeat interval of every instance.
pub(crate) const LEASE_RENEWAL: Duration = Duration::from_secs(1);
/// Lease of every instance: three missed heartbeats.
pub(crate) const LEASE_EXPIRATION: Duration = Duration::from_secs(3);
/// How often the registries evict expired leases.
pub(crate) const EVICTION_INTERVAL: Duration = Duration::from_secs(1);
/// How long the registries keep changes for delta fetches: thirty fetches' worth.
pub(crate) const DELTA_RETENTION: Duration = Duration::from_secs(30);
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
/// How long an idle pooled connection is kept.
pub(crate) const POOL_IDLE: Duration = Duration::from_secs(10);

/// The callers' per-call options.
pub(crate) fn options() -> Options {
    Options::new()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .total_timeout(TOTAL_TIMEOUT)
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
