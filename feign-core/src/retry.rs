//! Retry policies: whether and when a failed attempt is tried again.
//!
//! [`Retryer`](crate::Retryer), at the crate root, is the policy every client has by default
//! (OpenFeign's `Retryer.Default` with full jitter). A [`RetryPolicy`] of one's own, or
//! [`retry_fn`] over a closure, replaces it through
//! [`Builder::retryer`](crate::Builder::retryer). The trait, [`RetryContext`] and
//! [`RetryDecision`] are shared with feign-lb, whose policies may retry on another instance;
//! their shape may grow but not change.

pub(crate) mod retryer;

use std::time::Duration;

use crate::call_info::CallInfo;
use crate::Error;

/// Decides whether a failed attempt is retried, and after how long.
///
/// One policy serves every call of a client concurrently, so it keeps no per-call state: the
/// pipeline passes everything about the call in [`RetryContext`].
pub trait RetryPolicy: Send + Sync + 'static {
    /// Called once when a call starts, before its first attempt (retry budgets count calls here).
    fn on_call(&self) {}

    /// Decides what happens after attempt number `ctx.attempt` failed with `ctx.error`.
    fn decide(&self, ctx: &RetryContext<'_>) -> RetryDecision;

    /// Whether `call` may send a hedge now (see [`HedgingConfig`](crate::HedgingConfig)): a
    /// hedge budget refuses it when spent, or when most calls are slow at once. Default: yes.
    fn allow_hedge(&self, call: &CallInfo<'_>) -> bool {
        let _ = call;
        true
    }
}

/// What a [`RetryPolicy`] knows about the call whose attempt just failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct RetryContext<'a> {
    /// The call: service, method key, HTTP method, idempotency.
    pub call: CallInfo<'a>,
    /// How many attempts have been made so far (1 after the first failure).
    pub attempt: u32,
    /// Why the last attempt failed. `error.is_connect()` means nothing was sent.
    pub error: &'a Error,
    /// Time since the call started.
    pub elapsed: Duration,
    /// Time left before the call's overall deadline, if it has one.
    pub remaining: Option<Duration>,
}

impl<'a> RetryContext<'a> {
    /// The context after attempt `attempt` of `call` failed with `error`, for code that runs
    /// attempts itself (feign-lb's balancer for any HTTP call) and asks a policy about each.
    pub fn new(
        call: CallInfo<'a>,
        attempt: u32,
        error: &'a Error,
        elapsed: Duration,
        remaining: Option<Duration>,
    ) -> Self {
        RetryContext {
            call,
            attempt,
            error,
            elapsed,
            remaining,
        }
    }
}

/// A [`RetryPolicy`]'s verdict on a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryDecision {
    /// Give up: the caller gets the last attempt's error.
    Stop,
    /// Give up because a retry budget refused the retry: the caller's error says so
    /// ([`Error::is_retry_budget_exhausted`](crate::Error::is_retry_budget_exhausted)).
    BudgetExhausted,
    /// Try again after `delay`, on the same instance when `same_instance` is true.
    Retry {
        /// How long to wait before the next attempt.
        delay: Duration,
        /// Ask the resolver for the instance of the failed attempt again.
        same_instance: bool,
    },
}

/// Makes a [`RetryPolicy`] of a closure.
pub fn retry_fn<F>(f: F) -> FnRetryPolicy<F>
where
    F: Fn(&RetryContext<'_>) -> RetryDecision + Send + Sync + 'static,
{
    FnRetryPolicy(f)
}

/// A [`RetryPolicy`] made by [`retry_fn`].
#[derive(Clone)]
pub struct FnRetryPolicy<F>(F);

impl<F> RetryPolicy for FnRetryPolicy<F>
where
    F: Fn(&RetryContext<'_>) -> RetryDecision + Send + Sync + 'static,
{
    fn decide(&self, ctx: &RetryContext<'_>) -> RetryDecision {
        (self.0)(ctx)
    }
}

impl<F> std::fmt::Debug for FnRetryPolicy<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnRetryPolicy")
    }
}
