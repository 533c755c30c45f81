//! The settings of the circuit breaker and the bulkhead, with Resilience4j's defaults.

use std::fmt;
use std::time::Duration;

use tokio::sync::broadcast;

use super::state::StateTransition;
use crate::Error;

/// How many state transitions a slow subscriber may fall behind before it misses some.
const EVENT_CAPACITY: usize = 256;

/// Which calls share a circuit breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BreakerScope {
    /// One breaker per method, named by its key (`OrderService#get_order`), as Spring Cloud
    /// OpenFeign names them. The default.
    #[default]
    PerMethod,
    /// One breaker for the whole client, named by its service (`order-service`). Spring Cloud
    /// OpenFeign has no such scope: its `circuitbreaker.group.enabled` keeps a breaker per
    /// method and only looks their settings up under the client's name.
    PerClient,
}

/// A circuit breaker's settings, Resilience4j's names and defaults; turn it on with
/// [`Builder::circuit_breaker`](crate::Builder::circuit_breaker).
///
/// A count-based window of the last `sliding_window_size` calls decides: once at least
/// `minimum_number_of_calls` are recorded, a failure rate or a slow-call rate at or over its
/// threshold opens the breaker. Open, it refuses every call for `wait_duration_in_open_state`,
/// then turns half-open by itself and admits exactly `permitted_number_of_calls_in_half_open_state`
/// calls; their rates close it again or reopen it.
///
/// With the defaults a client must make 100 calls before the breaker can decide anything, so
/// a client with little traffic never trips: lower `minimum_number_of_calls` for such clients.
///
/// State transitions are broadcast to every [`CircuitBreakerConfig::subscribe`]r (clones of a
/// config share one channel) and reported as metrics (see [`crate::resilience`]).
#[derive(Clone)]
#[must_use]
pub struct CircuitBreakerConfig {
    pub(crate) failure_rate_threshold: f32,
    pub(crate) slow_call_rate_threshold: f32,
    pub(crate) slow_call_duration_threshold: Duration,
    pub(crate) sliding_window_size: u32,
    pub(crate) minimum_number_of_calls: u32,
    pub(crate) wait_duration_in_open_state: Duration,
    pub(crate) permitted_number_of_calls_in_half_open_state: u32,
    pub(crate) scope: BreakerScope,
    pub(crate) events: broadcast::Sender<StateTransition>,
}

impl Default for CircuitBreakerConfig {
    fn default() -> Self {
        CircuitBreakerConfig {
            failure_rate_threshold: 50.0,
            slow_call_rate_threshold: 100.0,
            slow_call_duration_threshold: Duration::from_secs(60),
            sliding_window_size: 100,
            minimum_number_of_calls: 100,
            wait_duration_in_open_state: Duration::from_secs(60),
            permitted_number_of_calls_in_half_open_state: 10,
            scope: BreakerScope::PerMethod,
            events: broadcast::channel(EVENT_CAPACITY).0,
        }
    }
}

impl CircuitBreakerConfig {
    /// The failure rate, in percent, at or over which the breaker opens. Default 50.
    pub fn failure_rate_threshold(mut self, percent: f32) -> Self {
        self.failure_rate_threshold = percent;
        self
    }

    /// The slow-call rate, in percent, at or over which the breaker opens. Default 100.
    pub fn slow_call_rate_threshold(mut self, percent: f32) -> Self {
        self.slow_call_rate_threshold = percent;
        self
    }

    /// A call taking at least this long is slow. Default 60 s.
    pub fn slow_call_duration_threshold(mut self, duration: Duration) -> Self {
        self.slow_call_duration_threshold = duration;
        self
    }

    /// How many of the latest calls the rates are computed over. Default 100.
    pub fn sliding_window_size(mut self, calls: u32) -> Self {
        self.sliding_window_size = calls;
        self
    }

    /// How many calls must be recorded before the rates count (capped at the window size).
    /// Default 100.
    pub fn minimum_number_of_calls(mut self, calls: u32) -> Self {
        self.minimum_number_of_calls = calls;
        self
    }

    /// How long an open breaker refuses calls before it turns half-open. Default 60 s.
    pub fn wait_duration_in_open_state(mut self, duration: Duration) -> Self {
        self.wait_duration_in_open_state = duration;
        self
    }

    /// How many trial calls a half-open breaker admits; their outcome closes or reopens it.
    /// Default 10.
    pub fn permitted_number_of_calls_in_half_open_state(mut self, calls: u32) -> Self {
        self.permitted_number_of_calls_in_half_open_state = calls;
        self
    }

    /// One breaker per method or per client. Default [`BreakerScope::PerMethod`].
    pub fn scope(mut self, scope: BreakerScope) -> Self {
        self.scope = scope;
        self
    }

    /// A stream of the state transitions of every breaker built from this config (and its
    /// clones). A receiver that falls more than 256 transitions behind misses the oldest.
    pub fn subscribe(&self) -> broadcast::Receiver<StateTransition> {
        self.events.subscribe()
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        let percent = |name: &str, value: f32| {
            if value > 0.0 && value <= 100.0 {
                Ok(())
            } else {
                Err(Error::builder(format!(
                    "circuit breaker `{name}` must be over 0 and at most 100, not {value}"
                )))
            }
        };
        percent("failure_rate_threshold", self.failure_rate_threshold)?;
        percent("slow_call_rate_threshold", self.slow_call_rate_threshold)?;
        for (name, value) in [
            ("sliding_window_size", self.sliding_window_size),
            ("minimum_number_of_calls", self.minimum_number_of_calls),
            (
                "permitted_number_of_calls_in_half_open_state",
                self.permitted_number_of_calls_in_half_open_state,
            ),
        ] {
            if value == 0 {
                return Err(Error::builder(format!(
                    "circuit breaker `{name}` must be at least 1"
                )));
            }
        }
        if self.wait_duration_in_open_state.is_zero() {
            return Err(Error::builder(
                "circuit breaker `wait_duration_in_open_state` must be greater than zero",
            ));
        }
        if self.slow_call_duration_threshold.is_zero() {
            return Err(Error::builder(
                "circuit breaker `slow_call_duration_threshold` must be greater than zero",
            ));
        }
        Ok(())
    }
}

impl fmt::Debug for CircuitBreakerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreakerConfig")
            .field("failure_rate_threshold", &self.failure_rate_threshold)
            .field("slow_call_rate_threshold", &self.slow_call_rate_threshold)
            .field(
                "slow_call_duration_threshold",
                &self.slow_call_duration_threshold,
            )
            .field("sliding_window_size", &self.sliding_window_size)
            .field("minimum_number_of_calls", &self.minimum_number_of_calls)
            .field(
                "wait_duration_in_open_state",
                &self.wait_duration_in_open_state,
            )
            .field(
                "permitted_number_of_calls_in_half_open_state",
                &self.permitted_number_of_calls_in_half_open_state,
            )
            .field("scope", &self.scope)
            .finish()
    }
}

/// A bulkhead's settings, Resilience4j's names and defaults; turn it on with
/// [`Builder::bulkhead`](crate::Builder::bulkhead).
///
/// At most `max_concurrent_calls` calls of the client are in flight; a call over it waits up to
/// `max_wait_duration` for a slot, then fails with [`Error::is_bulkhead_full`]. Only waiting
/// callers are queued, so memory grows with them and nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct BulkheadConfig {
    pub(crate) max_concurrent_calls: u32,
    pub(crate) max_wait_duration: Duration,
}

impl Default for BulkheadConfig {
    fn default() -> Self {
        BulkheadConfig {
            max_concurrent_calls: 25,
            max_wait_duration: Duration::ZERO,
        }
    }
}

impl BulkheadConfig {
    /// How many calls may be in flight at once. Default 25.
    pub fn max_concurrent_calls(mut self, calls: u32) -> Self {
        self.max_concurrent_calls = calls;
        self
    }

    /// How long a call waits for a slot before failing. Default zero: fail at once.
    pub fn max_wait_duration(mut self, duration: Duration) -> Self {
        self.max_wait_duration = duration;
        self
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        if self.max_concurrent_calls == 0 {
            return Err(Error::builder(
                "bulkhead `max_concurrent_calls` must be at least 1",
            ));
        }
        if self.max_concurrent_calls as usize > tokio::sync::Semaphore::MAX_PERMITS {
            return Err(Error::builder(
                "bulkhead `max_concurrent_calls` is too large",
            ));
        }
        Ok(())
    }
}
