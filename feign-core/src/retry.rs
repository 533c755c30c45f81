//! Retry policy: whether and when a failed attempt is tried again.
//!
//! CONTRACT (fixed): the `RetryPolicy` trait, `RetryContext` and `RetryDecision` below are
//! shared with feign-lb; their shape may grow but not change. The concrete `Retryer` (OpenFeign's
//! `Retryer.Default` with full jitter: `Retryer::default()`, `Retryer::never()`, builder-style
//! setters) implements `RetryPolicy` in this module.

use std::time::Duration;

use http::Method;

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
}

/// What a [`RetryPolicy`] knows about the call whose attempt just failed.
#[derive(Debug)]
#[non_exhaustive]
pub struct RetryContext<'a> {
    /// The method key, e.g. `OrderService#get_order`.
    pub method_key: &'a str,
    /// The service name the client was declared with.
    pub service: &'a str,
    /// The HTTP method.
    pub method: &'a Method,
    /// True for GET, HEAD, OPTIONS, PUT, DELETE, or a method marked `#[idempotent]`.
    pub idempotent: bool,
    /// How many attempts have been made so far (1 after the first failure).
    pub attempt: u32,
    /// Why the last attempt failed. `error.is_connect()` means nothing was sent.
    pub error: &'a Error,
    /// Time since the call started.
    pub elapsed: Duration,
    /// Time left before the call's overall deadline, if it has one.
    pub remaining: Option<Duration>,
}

/// A [`RetryPolicy`]'s verdict on a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryDecision {
    /// Give up: the caller gets the last attempt's error.
    Stop,
    /// Try again after `delay`, on the same instance when `same_instance` is true.
    Retry {
        /// How long to wait before the next attempt.
        delay: Duration,
        /// Ask the resolver for the instance of the failed attempt again.
        same_instance: bool,
    },
}
