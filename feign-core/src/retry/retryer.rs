//! [`Retryer`], OpenFeign's `Retryer.Default`: the retry policy a client has by default.

use std::time::Duration;

use super::{RetryContext, RetryDecision, RetryPolicy};

/// OpenFeign's `Retryer.Default` with full jitter and an overall deadline.
///
/// The n-th retry waits a random time in `[0, min(period × multiplier^(n-1), max_period)]`, or
/// the server's `Retry-After` when it sent one. A failed attempt is retried when
/// - nothing was sent (`error.is_connect()`), whatever the method; or
/// - the call is idempotent (GET, HEAD, PUT, DELETE, marked `#[idempotent]`, or carrying an
///   `Idempotency-Key` header) and it failed
///   with a timeout, a transport or body error, a 429, 502, 503 or 504, or any error carrying
///   `Retry-After`.
///
/// It stops after `max_attempts` attempts, when the next delay would pass the deadline (its
/// own, counted from the call's start, or the call's total timeout, whichever is sooner), or
/// when `Retry-After` asks for longer than the time left.
#[derive(Debug, Clone, PartialEq)]
pub struct Retryer {
    period: Duration,
    max_period: Duration,
    multiplier: f64,
    max_attempts: u32,
    jitter: bool,
    deadline: Option<Duration>,
    max_retry_after: Duration,
}

impl Default for Retryer {
    /// 100 ms growing ×1.5 up to 1 s, 5 attempts, full jitter, 30 s deadline, `Retry-After`
    /// honoured up to 30 s.
    fn default() -> Self {
        Retryer {
            period: Duration::from_millis(100),
            max_period: Duration::from_secs(1),
            multiplier: 1.5,
            max_attempts: 5,
            jitter: true,
            deadline: Some(Duration::from_secs(30)),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl Retryer {
    /// Never retries: one attempt per call.
    pub fn never() -> Self {
        Retryer {
            max_attempts: 1,
            ..Retryer::default()
        }
    }

    /// The first delay. Default 100 ms.
    pub fn period(mut self, period: Duration) -> Self {
        self.period = period;
        self
    }

    /// The largest delay. Default 1 s.
    pub fn max_period(mut self, max_period: Duration) -> Self {
        self.max_period = max_period;
        self
    }

    /// How much each delay grows. Default 1.5; values below 1 count as 1.
    pub fn multiplier(mut self, multiplier: f64) -> Self {
        self.multiplier = if multiplier.is_finite() {
            multiplier.max(1.0)
        } else {
            1.0
        };
        self
    }

    /// Attempts per call, the first included. Default 5; 0 counts as 1.
    pub fn max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = max_attempts.max(1);
        self
    }

    /// Whether delays are drawn at random below the backoff (full jitter). Default true.
    pub fn jitter(mut self, jitter: bool) -> Self {
        self.jitter = jitter;
        self
    }

    /// No retry starts after this much time since the call began. Default 30 s; `None` leaves
    /// only the call's total timeout.
    pub fn deadline(mut self, deadline: Option<Duration>) -> Self {
        self.deadline = deadline;
        self
    }

    /// The longest `Retry-After` honoured when there is no deadline. Default 30 s.
    pub fn max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// The backoff ceiling before retry number `retry` (1-based).
    fn backoff(&self, retry: u32) -> Duration {
        crate::backoff::exponential(self.period, self.multiplier, self.max_period, retry)
    }

    fn is_retryable(ctx: &RetryContext<'_>) -> bool {
        let error = ctx.error;
        if error.is_connect() {
            return true;
        }
        if !ctx.call.idempotent {
            return false;
        }
        let retryable_status = error
            .status()
            .is_some_and(|s| matches!(s.as_u16(), 429 | 502 | 503 | 504));
        error.is_timeout()
            || error.is_transport()
            || (error.is_body() && !error.is_too_large())
            || (error.is_status() && retryable_status)
            || error.retry_after().is_some()
    }
}

impl RetryPolicy for Retryer {
    fn decide(&self, ctx: &RetryContext<'_>) -> RetryDecision {
        if ctx.attempt >= self.max_attempts || !Retryer::is_retryable(ctx) {
            return RetryDecision::Stop;
        }
        let own_left = self.deadline.map(|d| d.saturating_sub(ctx.elapsed));
        let left = match (own_left, ctx.remaining) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let delay = match ctx.error.retry_after() {
            Some(asked) if asked > left.unwrap_or(self.max_retry_after) => {
                return RetryDecision::Stop
            }
            Some(asked) => asked,
            None => {
                let ceiling = self.backoff(ctx.attempt);
                if self.jitter {
                    crate::backoff::full_jitter(ceiling)
                } else {
                    ceiling
                }
            }
        };
        if left.is_some_and(|left| delay >= left) {
            return RetryDecision::Stop;
        }
        RetryDecision::Retry {
            delay,
            same_instance: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Method, StatusCode};

    use crate::call_info::CallInfo;
    use crate::Error;

    fn decide(
        retryer: &Retryer,
        method: Method,
        idempotent: bool,
        error: &Error,
        attempt: u32,
    ) -> RetryDecision {
        let ctx = RetryContext {
            call: CallInfo::new("s", "T#m", &method).with_idempotent(idempotent),
            attempt,
            error,
            elapsed: Duration::ZERO,
            remaining: None,
        };
        retryer.decide(&ctx)
    }

    fn retries(d: RetryDecision) -> bool {
        matches!(d, RetryDecision::Retry { .. })
    }

    #[test]
    fn matrix_of_methods_and_faults() {
        let r = Retryer::default();
        let connect = Error::connect("refused");
        let timeout = Error::timeout("slow");
        let reset = Error::transport("reset");
        let unavailable = Error::status_error(
            StatusCode::SERVICE_UNAVAILABLE,
            Default::default(),
            Default::default(),
        );
        let bad_request = Error::status_error(
            StatusCode::BAD_REQUEST,
            Default::default(),
            Default::default(),
        );
        let decode = Error::decode("bad json");
        for (method, idempotent) in [
            (Method::GET, true),
            (Method::PUT, true),
            (Method::DELETE, true),
            (Method::POST, true),
        ] {
            for error in [&connect, &timeout, &reset, &unavailable] {
                assert!(
                    retries(decide(&r, method.clone(), idempotent, error, 1)),
                    "{method} {error:?}"
                );
            }
            assert!(!retries(decide(
                &r,
                method.clone(),
                idempotent,
                &bad_request,
                1
            )));
            assert!(!retries(decide(&r, method.clone(), idempotent, &decode, 1)));
        }
        for method in [Method::POST, Method::PATCH] {
            assert!(
                retries(decide(&r, method.clone(), false, &connect, 1)),
                "nothing was sent"
            );
            for error in [&timeout, &reset, &unavailable] {
                assert!(
                    !retries(decide(&r, method.clone(), false, error, 1)),
                    "{method} {error:?}"
                );
            }
        }
        assert!(
            !retries(decide(&r, Method::GET, true, &connect, 5)),
            "5 attempts at most"
        );
        assert!(!retries(decide(
            &Retryer::never(),
            Method::GET,
            true,
            &connect,
            1
        )));
    }

    #[test]
    fn backoff_grows_by_the_multiplier_up_to_the_cap() {
        let r = Retryer::default().jitter(false).max_attempts(10);
        let delays: Vec<_> = (1..=7).map(|n| r.backoff(n).as_micros()).collect();
        assert_eq!(
            delays,
            [100_000, 150_000, 225_000, 337_500, 506_250, 759_375, 1_000_000]
        );
        let err = Error::connect("refused");
        for attempt in 1..10 {
            let RetryDecision::Retry { delay, .. } = decide(
                &Retryer::default().max_attempts(10),
                Method::GET,
                true,
                &err,
                attempt,
            ) else {
                panic!("retries");
            };
            assert!(
                delay <= r.backoff(attempt),
                "full jitter stays below the backoff"
            );
        }
    }
}
