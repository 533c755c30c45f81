//! The outcomes a circuit breaker records and the transitions they call for: the windows its
//! mutex guards. Checked with the state word by the `breaker` models of `tests/loom/`.

use super::state::CircuitState;
use super::window::{Rates, Window};
use super::word::Word;

/// When outcomes move a breaker: Resilience4j's thresholds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Thresholds {
    /// Percent of failures that opens the breaker.
    pub(super) failure_rate: f32,
    /// Percent of slow calls that opens the breaker.
    pub(super) slow_call_rate: f32,
    /// Calls recorded while closed before the rates count (at most the window's size).
    pub(super) minimum_calls: usize,
    /// Trial calls in the half-open state.
    pub(super) trials: usize,
}

/// The windows outcomes are recorded in, one per recording state.
#[derive(Debug)]
pub(super) struct Windows {
    closed: Window,
    half_open: Window,
    thresholds: Thresholds,
}

impl Windows {
    /// Empty windows: the closed one of `window_size` calls, the half-open one of the trials.
    pub(super) fn new(window_size: usize, thresholds: Thresholds) -> Windows {
        Windows {
            closed: Window::new(window_size),
            half_open: Window::new(thresholds.trials),
            thresholds,
        }
    }

    /// Records the outcome of a call admitted in `generation`, the breaker's word being `word`
    /// now, and returns the state the outcomes call for. The outcome of a call admitted in an
    /// older generation is not counted: the state it was admitted in is gone.
    pub(super) fn record(
        &mut self,
        word: Word,
        generation: u64,
        failed: bool,
        slow: bool,
    ) -> Option<CircuitState> {
        if word.generation() != generation {
            return None;
        }
        match word.state() {
            CircuitState::Closed => {
                let rates = self.closed.record(failed, slow);
                (rates.calls >= self.thresholds.minimum_calls && self.over_threshold(rates))
                    .then_some(CircuitState::Open)
            }
            CircuitState::HalfOpen => {
                let rates = self.half_open.record(failed, slow);
                (rates.calls >= self.thresholds.trials).then(|| {
                    if self.over_threshold(rates) {
                        CircuitState::Open
                    } else {
                        CircuitState::Closed
                    }
                })
            }
            CircuitState::Open => None,
        }
    }

    /// Forgets every outcome (on a transition).
    pub(super) fn clear(&mut self) {
        self.closed.clear();
        self.half_open.clear();
    }

    fn over_threshold(&self, rates: Rates) -> bool {
        rates.failure_rate >= self.thresholds.failure_rate
            || rates.slow_call_rate >= self.thresholds.slow_call_rate
    }
}
