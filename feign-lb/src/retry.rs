//! Retries across instances with Spring Cloud LoadBalancer's settings, bounded by a retry budget.

use std::sync::Weak;
use std::time::Duration;

use feign_core::retry::{RetryContext, RetryDecision, RetryPolicy};

use crate::budget::{Budget, HedgeBudget, HedgeRefusal, Hedges, RetryBudget};
use crate::lifecycle::LiveCounters;
use crate::rng::{Draw, Rng};
use crate::state::ServiceState;

/// Exponential backoff between retries (Spring's `retry.backoff.*`; off by default, as there).
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct Backoff {
    pub(crate) enabled: bool,
    pub(crate) min: Duration,
    pub(crate) max: Duration,
    pub(crate) jitter: f64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            enabled: false,
            min: Duration::from_millis(5),
            max: Duration::from_secs(1),
            jitter: 0.5,
        }
    }
}

impl Backoff {
    /// No wait between retries (Spring's default).
    pub fn none() -> Self {
        Backoff::default()
    }

    /// Waits `min × 2^(retry − 1)`, capped at `max`, each spread by ±`jitter` (default 0.5).
    pub fn exponential(min: Duration, max: Duration) -> Self {
        Backoff {
            enabled: true,
            min,
            max: max.max(min),
            jitter: 0.5,
        }
    }

    /// The jitter factor, 0.0 to 1.0 (clamped).
    pub fn jitter(mut self, jitter: f64) -> Self {
        self.jitter = if jitter.is_nan() {
            0.5
        } else {
            jitter.clamp(0.0, 1.0)
        };
        self
    }
}

/// Retry settings, named after `spring.cloud.loadbalancer.retry.*`.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct RetryConfig {
    pub(crate) enabled: bool,
    pub(crate) same_instance: u32,
    pub(crate) next_instance: u32,
    pub(crate) all_operations: bool,
    pub(crate) statuses: Vec<u16>,
    pub(crate) backoff: Backoff,
    pub(crate) budget: Option<RetryBudget>,
    pub(crate) hedge_budget: Option<HedgeBudget>,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            enabled: true,
            same_instance: 0,
            next_instance: 1,
            all_operations: false,
            statuses: vec![502, 503, 504],
            backoff: Backoff::default(),
            budget: Some(RetryBudget::default()),
            hedge_budget: Some(HedgeBudget::default()),
        }
    }
}

impl RetryConfig {
    /// The defaults: no retry on the same instance, one on the next instance, idempotent
    /// methods only (any method when nothing was sent), retry on 502, 503 and 504, no backoff,
    /// a budget of 20 % of calls plus 10/s; and for the hedges of clients that hedge
    /// (`feign_core::HedgingConfig`), a budget of their own ([`HedgeBudget`]).
    pub fn new() -> Self {
        RetryConfig::default()
    }

    /// Never retry.
    pub fn disabled() -> Self {
        RetryConfig {
            enabled: false,
            ..RetryConfig::default()
        }
    }

    /// `max-retries-on-same-service-instance` (default 0).
    pub fn max_retries_on_same_instance(mut self, n: u32) -> Self {
        self.same_instance = n.min(10);
        self
    }

    /// `max-retries-on-next-service-instance` (default 1).
    pub fn max_retries_on_next_instance(mut self, n: u32) -> Self {
        self.next_instance = n.min(10);
        self
    }

    /// `retry-on-all-operations`: also retry non-idempotent methods after the request may have
    /// been sent (default false).
    pub fn retry_on_all_operations(mut self, yes: bool) -> Self {
        self.all_operations = yes;
        self
    }

    /// `retryable-status-codes` (default 502, 503, 504).
    pub fn retryable_status_codes(mut self, codes: impl IntoIterator<Item = u16>) -> Self {
        self.statuses = codes.into_iter().collect();
        self
    }

    /// `backoff.*` (default none).
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The retry budget of the service (default 20 % + 10/s over 10 s).
    pub fn budget(mut self, budget: RetryBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Removes the retry budget: retries are bounded only by the counts above.
    pub fn without_budget(mut self) -> Self {
        self.budget = None;
        self
    }

    /// The hedge budget of the service (default [`HedgeBudget::new`]: 5 % of calls + 5/s over
    /// 1 s, none while more than half of the calls ask for one). Hedges never draw on the
    /// retry budget, nor retries on this one.
    pub fn hedge_budget(mut self, budget: HedgeBudget) -> Self {
        self.hedge_budget = Some(budget);
        self
    }

    /// Removes the hedge budget: every hedge the clients' hedging settings ask for is sent.
    pub fn without_hedge_budget(mut self) -> Self {
        self.hedge_budget = None;
        self
    }
}

/// The [`RetryPolicy`] a [`crate::LoadBalancer`] hands to clients of one service.
pub struct LbRetryPolicy {
    config: RetryConfig,
    budget: Option<Budget>,
    hedges: Option<Hedges>,
    service: Weak<ServiceState>,
    rng: Rng,
}

impl std::fmt::Debug for LbRetryPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LbRetryPolicy")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl LbRetryPolicy {
    pub(crate) fn new(config: RetryConfig, service: Weak<ServiceState>, seed: u64) -> Self {
        let budget = config.budget.as_ref().map(Budget::new);
        let hedges = config.hedge_budget.as_ref().map(Hedges::new);
        LbRetryPolicy {
            config,
            budget,
            hedges,
            service,
            rng: Rng::new(seed),
        }
    }

    /// Whether the failure may be retried at all, whatever the counts.
    fn retryable(&self, ctx: &RetryContext<'_>) -> bool {
        let error = ctx.error;
        if error.is_connect() {
            return true; // nothing was sent: safe for any method
        }
        if !(ctx.call.idempotent || self.config.all_operations) {
            return false;
        }
        if let Some(status) = error.status() {
            return self.config.statuses.contains(&status.as_u16());
        }
        error.is_timeout() || error.is_transport()
    }

    fn delay(&self, retry: u32, ctx: &RetryContext<'_>, same_instance: bool) -> Duration {
        let backoff = &self.config.backoff;
        let mut delay = Duration::ZERO;
        if backoff.enabled {
            let base = feign_core::backoff::exponential(backoff.min, 2.0, backoff.max, retry);
            // Spread by ± jitter from the balancer's own (seedable) random source.
            let spread = 1.0 + backoff.jitter * (2.0 * self.rng.unit() - 1.0);
            delay = base
                .mul_f64(spread.max(0.0))
                .clamp(backoff.min, backoff.max);
        }
        if same_instance {
            if let Some(asked) = ctx.error.retry_after() {
                delay = delay.max(asked.min(backoff.max));
            }
        }
        delay
    }

    fn bump(&self, pick: impl Fn(&LiveCounters) -> &std::sync::atomic::AtomicU64) {
        if let Some(state) = self.service.upgrade() {
            LiveCounters::bump(pick(&state.counters));
        }
    }
}

impl RetryPolicy for LbRetryPolicy {
    fn on_call(&self) {
        if let Some(budget) = &self.budget {
            budget.deposit();
        }
        if let Some(hedges) = &self.hedges {
            hedges.on_call();
        }
    }

    fn decide(&self, ctx: &RetryContext<'_>) -> RetryDecision {
        if !self.config.enabled || ctx.attempt == 0 || !self.retryable(ctx) {
            return RetryDecision::Stop;
        }
        let per_instance = self.config.same_instance + 1;
        let done = ctx.attempt - 1;
        let same_used = done % per_instance;
        let next_used = done / per_instance;
        let same_instance = !ctx.error.is_connect() && same_used < self.config.same_instance;
        if !same_instance && next_used >= self.config.next_instance {
            return RetryDecision::Stop;
        }
        if let Some(budget) = &self.budget {
            if !budget.withdraw() {
                self.bump(|c| &c.retry_budget_exhausted);
                tracing::debug!(service = ctx.call.service, "retry budget exhausted");
                return RetryDecision::BudgetExhausted;
            }
        }
        let delay = self.delay(ctx.attempt, ctx, same_instance);
        if ctx.remaining.is_some_and(|left| delay >= left) {
            return RetryDecision::Stop;
        }
        self.bump(|c| &c.retries);
        RetryDecision::Retry {
            delay,
            same_instance,
        }
    }

    fn allow_hedge(&self, call: &feign_core::resolve::CallInfo<'_>) -> bool {
        let verdict = self.hedges.as_ref().map_or(Ok(()), Hedges::allow);
        match verdict {
            Ok(()) => self.bump(|c| &c.hedges),
            Err(refusal) => {
                self.bump(|c| &c.hedges_refused);
                let why = match refusal {
                    HedgeRefusal::Budget => "hedge budget exhausted",
                    HedgeRefusal::Overload => "most calls are slow (an overload, not an outlier)",
                };
                tracing::debug!(service = call.service, "no hedge: {why}");
            }
        }
        verdict.is_ok()
    }
}
