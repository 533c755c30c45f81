//! Resilience4j's Micrometer names, reported through the `metrics` facade.
//!
//! Handles are registered once per breaker and bulkhead, so recording a call is an atomic add
//! in the installed recorder, not a lookup.

use ::metrics::{Counter, Gauge};

use super::state::CircuitState;

/// Gauge, labels `name` and `state`: 1 for the breaker's current state, 0 for the others.
pub const CIRCUIT_BREAKER_STATE: &str = "resilience4j.circuitbreaker.state";
/// Counter, labels `name` and `kind` (`successful`, `failed`, `not_permitted`, `ignored`).
pub const CIRCUIT_BREAKER_CALLS: &str = "resilience4j.circuitbreaker.calls";
/// Gauge, label `name`: how many more calls the bulkhead admits now.
pub const BULKHEAD_AVAILABLE_CONCURRENT_CALLS: &str =
    "resilience4j.bulkhead.available.concurrent.calls";

/// How a call ended, as the `kind` label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CallKind {
    Successful,
    Failed,
    NotPermitted,
    Ignored,
}

impl CallKind {
    const ALL: [CallKind; 4] = [
        CallKind::Successful,
        CallKind::Failed,
        CallKind::NotPermitted,
        CallKind::Ignored,
    ];

    fn label(self) -> &'static str {
        match self {
            CallKind::Successful => "successful",
            CallKind::Failed => "failed",
            CallKind::NotPermitted => "not_permitted",
            CallKind::Ignored => "ignored",
        }
    }
}

/// One breaker's registered handles.
pub(super) struct BreakerMetrics {
    states: [Gauge; 3],
    calls: [Counter; 4],
}

impl BreakerMetrics {
    pub(super) fn register(name: &str) -> BreakerMetrics {
        let states = CircuitState::ALL.map(|state| {
            ::metrics::gauge!(CIRCUIT_BREAKER_STATE, "name" => name.to_owned(), "state" => state.as_str())
        });
        let calls = CallKind::ALL.map(|kind| {
            ::metrics::counter!(CIRCUIT_BREAKER_CALLS, "name" => name.to_owned(), "kind" => kind.label())
        });
        let metrics = BreakerMetrics { states, calls };
        metrics.state(CircuitState::Closed);
        metrics
    }

    pub(super) fn call(&self, kind: CallKind) {
        self.calls[kind as usize].increment(1);
    }

    pub(super) fn state(&self, current: CircuitState) {
        for (state, gauge) in CircuitState::ALL.iter().zip(&self.states) {
            gauge.set(if *state == current { 1.0 } else { 0.0 });
        }
    }
}

/// A bulkhead's gauge.
pub(super) fn bulkhead_available(name: &str) -> Gauge {
    ::metrics::gauge!(BULKHEAD_AVAILABLE_CONCURRENT_CALLS, "name" => name.to_owned())
}
