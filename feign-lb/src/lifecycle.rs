//! Lifecycle hooks and counters, named after Spring Cloud LoadBalancer's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use feign_core::resolve::AttemptOutcome;

use crate::ServiceInstance;

/// How an attempt ended, as Spring's `CompletionContext.Status` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionStatus {
    /// A response arrived (any status: 5xx responses are successes of the balancer, as in Spring).
    Success,
    /// The attempt failed without a response: connect error, timeout, broken body.
    Failed,
    /// No instance could be chosen, or the call was cancelled mid-attempt.
    Discard,
}

/// What [`LifecycleHook::on_complete`] is told.
#[derive(Debug)]
#[non_exhaustive]
pub struct Completion<'a> {
    /// The service the call was for.
    pub service: &'a str,
    /// The instance the attempt went to; `None` when none could be chosen.
    pub instance: Option<&'a ServiceInstance>,
    /// How the attempt ended.
    pub status: CompletionStatus,
    /// The pipeline's outcome; `None` when no instance could be chosen.
    pub outcome: Option<&'a AttemptOutcome<'a>>,
    /// Time from the pick to the end of the attempt.
    pub elapsed: Duration,
}

/// Spring's `LoadBalancerLifecycle`: hears every pick and how every attempt ended.
///
/// Hooks run inline on the calling task: keep them short and non-blocking.
pub trait LifecycleHook: Send + Sync + 'static {
    /// Before an instance is chosen for an attempt.
    fn on_start(&self, service: &str) {
        let _ = service;
    }

    /// After an instance was chosen, before the attempt is sent.
    fn on_start_request(&self, service: &str, instance: &ServiceInstance) {
        let _ = (service, instance);
    }

    /// When the attempt ended, or when no instance could be chosen.
    fn on_complete(&self, completion: &Completion<'_>) {
        let _ = completion;
    }
}

/// Counters of one service, read with [`crate::LoadBalancer::counters`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Counters {
    /// `loadbalancer.requests.active`: attempts in flight now.
    pub active: u64,
    /// `loadbalancer.requests.success`: attempts that got a response, whatever its status, as
    /// Spring Cloud LoadBalancer counts them: a 503 is a "success" here. Read
    /// [`server_errors`](Counters::server_errors) beside it to see whether the service is
    /// healthy.
    pub success: u64,
    /// Of [`success`](Counters::success), the responses with a 5xx status. The `metrics`
    /// facade reports them as `loadbalancer.requests.success` with `outcome=SERVER_ERROR`.
    pub server_errors: u64,
    /// Of [`success`](Counters::success), the responses with a 4xx status (`outcome=CLIENT_ERROR`
    /// in the `metrics` facade).
    pub client_errors: u64,
    /// `loadbalancer.requests.failed`: attempts that failed without a response.
    pub failed: u64,
    /// `loadbalancer.requests.discard`: picks with no instance, and cancelled attempts.
    pub discard: u64,
    /// `loadbalancer.ejections`: instances taken out by passive ejection.
    pub ejections: u64,
    /// `loadbalancer.panic`: picks made in panic mode (more than half of the instances ejected).
    pub panic: u64,
    /// `loadbalancer.retries`: retries the retry policy allowed.
    pub retries: u64,
    /// `loadbalancer.retry.budget.exhausted`: retries refused by the retry budget.
    pub retry_budget_exhausted: u64,
    /// `loadbalancer.hedges`: hedges the hedge budget allowed.
    pub hedges: u64,
    /// `loadbalancer.hedges.refused`: hedges refused, the hedge budget spent or most calls
    /// slow ([`HedgeBudget`](crate::HedgeBudget)).
    pub hedges_refused: u64,
}

impl Counters {
    /// The counters under their metric names, Spring's first; the 5xx and 4xx responses under
    /// the name and tag the `metrics` facade reports them with.
    pub fn named(&self) -> [(&'static str, u64); 12] {
        [
            ("loadbalancer.requests.active", self.active),
            ("loadbalancer.requests.success", self.success),
            (
                "loadbalancer.requests.success{outcome=SERVER_ERROR}",
                self.server_errors,
            ),
            (
                "loadbalancer.requests.success{outcome=CLIENT_ERROR}",
                self.client_errors,
            ),
            ("loadbalancer.requests.failed", self.failed),
            ("loadbalancer.requests.discard", self.discard),
            ("loadbalancer.ejections", self.ejections),
            ("loadbalancer.panic", self.panic),
            ("loadbalancer.retries", self.retries),
            (
                "loadbalancer.retry.budget.exhausted",
                self.retry_budget_exhausted,
            ),
            ("loadbalancer.hedges", self.hedges),
            ("loadbalancer.hedges.refused", self.hedges_refused),
        ]
    }
}

/// The live counters behind [`Counters`]; `active` is not among them, it is the sum of the
/// instances' own in-flight counts, so a pick does not touch a counter shared by the service.
#[derive(Debug, Default)]
pub(crate) struct LiveCounters {
    pub(crate) success: AtomicU64,
    pub(crate) server_errors: AtomicU64,
    pub(crate) client_errors: AtomicU64,
    pub(crate) failed: AtomicU64,
    pub(crate) discard: AtomicU64,
    pub(crate) ejections: AtomicU64,
    pub(crate) panic: AtomicU64,
    pub(crate) retries: AtomicU64,
    pub(crate) retry_budget_exhausted: AtomicU64,
    pub(crate) hedges: AtomicU64,
    pub(crate) hedges_refused: AtomicU64,
}

impl LiveCounters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now, with `active` attempts in flight.
    pub(crate) fn read(&self, active: u64) -> Counters {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Counters {
            active,
            success: r(&self.success),
            server_errors: r(&self.server_errors),
            client_errors: r(&self.client_errors),
            failed: r(&self.failed),
            discard: r(&self.discard),
            ejections: r(&self.ejections),
            panic: r(&self.panic),
            retries: r(&self.retries),
            retry_budget_exhausted: r(&self.retry_budget_exhausted),
            hedges: r(&self.hedges),
            hedges_refused: r(&self.hedges_refused),
        }
    }
}
