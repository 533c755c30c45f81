//! The states of a circuit breaker and the transitions between them: the vocabulary the
//! breaker, its settings and its metrics share.

use std::sync::Arc;

/// The state of a circuit breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CircuitState {
    /// Calls go through; outcomes are recorded.
    Closed,
    /// Calls are refused without any network I/O.
    Open,
    /// A fixed number of trial calls go through; the others are refused.
    HalfOpen,
}

impl CircuitState {
    pub(super) const ALL: [CircuitState; 3] = [
        CircuitState::Closed,
        CircuitState::Open,
        CircuitState::HalfOpen,
    ];

    /// The name Resilience4j's metrics give the state: `closed`, `open` or `half_open`.
    pub fn as_str(self) -> &'static str {
        match self {
            CircuitState::Closed => "closed",
            CircuitState::Open => "open",
            CircuitState::HalfOpen => "half_open",
        }
    }
}

/// A circuit breaker changed state.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StateTransition {
    /// The breaker's name: the method key, or the service for a per-client breaker.
    pub breaker: Arc<str>,
    /// The state it left.
    pub from: CircuitState,
    /// The state it entered.
    pub to: CircuitState,
}
