//! One circuit breaker: Resilience4j's closed → open → half-open state machine.
//!
//! The state, the half-open permits left and a generation share one atomic word
//! ([`super::word`]), so admitting a call is a load in the closed state and one compare-and-swap
//! in the half-open state (which is why exactly the permitted number of calls get through,
//! however many race). Outcomes go to small mutex-protected windows ([`super::outcomes`]);
//! transitions happen under that mutex and bump the generation, so the outcome of a call
//! admitted before a transition is never counted after it.
//!
//! Checked, with its state word and windows, by the `breaker` models of `tests/loom/`, which
//! compile this file beside loom's types (hence its unit tests in `breaker_tests.rs`).

use std::sync::{Arc, PoisonError, Weak};
use std::time::Duration;

use tokio::time::Instant;

use super::classify::Classification;
use super::config::CircuitBreakerConfig;
use super::metrics::{BreakerMetrics, CallKind};
use super::outcomes::{Thresholds, Windows};
use super::state::{CircuitState, StateTransition};
use super::word::{Admission, StateWord, Word};
use crate::clock::Clock;
use crate::sync::{AtomicU64, Mutex, MutexGuard, Ordering};
use crate::Error;

/// One circuit breaker.
pub(crate) struct Breaker {
    name: Arc<str>,
    config: CircuitBreakerConfig,
    word: StateWord,
    /// When an open breaker may turn half-open, as a reading of `clock`.
    open_until: AtomicU64,
    clock: Clock,
    windows: Mutex<Windows>,
    metrics: BreakerMetrics,
    me: Weak<Breaker>,
}

impl Breaker {
    pub(crate) fn new(name: &str, config: &CircuitBreakerConfig) -> Arc<Breaker> {
        Arc::new_cyclic(|me| Breaker {
            name: name.into(),
            config: config.clone(),
            word: StateWord::new(),
            open_until: AtomicU64::new(0),
            clock: Clock::new(),
            windows: Mutex::new(Windows::new(
                config.sliding_window_size as usize,
                Thresholds {
                    failure_rate: config.failure_rate_threshold,
                    slow_call_rate: config.slow_call_rate_threshold,
                    minimum_calls: config
                        .minimum_number_of_calls
                        .min(config.sliding_window_size)
                        as usize,
                    trials: config.permitted_number_of_calls_in_half_open_state as usize,
                },
            )),
            metrics: BreakerMetrics::register(name),
            me: me.clone(),
        })
    }

    /// The current state; an open breaker whose wait is over reads as half-open.
    #[cfg(test)]
    pub(crate) fn state(&self) -> CircuitState {
        let word = self.word.load();
        if word.state() == CircuitState::Open && self.wait_is_over() {
            self.half_open_after_wait(word.generation());
            return self.word.load().state();
        }
        word.state()
    }

    /// The state the word holds now, without turning an open breaker whose wait is over
    /// half-open as [`Breaker::state`] does.
    #[cfg(test)]
    pub(super) fn word_state(&self) -> CircuitState {
        self.word.load().state()
    }

    /// Admits a call, or refuses it with [`Error::is_circuit_open`] and no other work.
    pub(crate) fn acquire(self: &Arc<Self>) -> Result<Permit, Error> {
        loop {
            match self.word.admit() {
                Admission::Admitted(generation) => return Ok(self.permit(generation)),
                Admission::Open(word) if self.wait_is_over() => {
                    self.half_open_after_wait(word.generation());
                }
                Admission::Open(_) | Admission::Full => return Err(self.refuse()),
            }
        }
    }

    fn permit(self: &Arc<Self>, generation: u64) -> Permit {
        Permit {
            breaker: Some(self.clone()),
            generation,
            started: Instant::now(),
        }
    }

    fn refuse(&self) -> Error {
        self.metrics.call(CallKind::NotPermitted);
        Error::circuit_open(&self.name)
    }

    fn wait_is_over(&self) -> bool {
        self.clock.now() >= self.open_until.load(Ordering::Acquire)
    }

    fn lock(&self) -> MutexGuard<'_, Windows> {
        // The windows hold plain counters: a panic elsewhere cannot leave them inconsistent.
        self.windows.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Open → half-open, if the breaker is still open in `generation` and its wait is over.
    pub(super) fn half_open_after_wait(&self, generation_seen: u64) {
        let mut windows = self.lock();
        let word = self.word.load();
        if word.state() == CircuitState::Open
            && word.generation() == generation_seen
            && self.wait_is_over()
        {
            self.transition(&mut windows, word, CircuitState::HalfOpen);
        }
    }

    /// Records the outcome of a call admitted in `generation`.
    fn record(&self, generation_admitted: u64, outcome: Outcome, elapsed: Duration) {
        let (failed, kind) = match outcome {
            Outcome::Success => (false, CallKind::Successful),
            Outcome::Failure => (true, CallKind::Failed),
            Outcome::Ignored => {
                self.metrics.call(CallKind::Ignored);
                self.word.give_back(generation_admitted);
                return;
            }
        };
        self.metrics.call(kind);
        let slow = elapsed >= self.config.slow_call_duration_threshold;
        let mut windows = self.lock();
        let word = self.word.load();
        if let Some(to) = windows.record(word, generation_admitted, failed, slow) {
            self.transition(&mut windows, word, to);
        }
    }

    /// Moves from the state in `word` to `to`; the caller holds the windows' lock, so this is
    /// the only transition in progress.
    fn transition(&self, windows: &mut Windows, word: Word, to: CircuitState) {
        let from = word.state();
        let permits = match to {
            CircuitState::HalfOpen => self.config.permitted_number_of_calls_in_half_open_state,
            _ => 0,
        };
        windows.clear();
        let deadline = Instant::now() + self.config.wait_duration_in_open_state;
        if to == CircuitState::Open {
            // Written before the state, so no caller sees `Open` with an old deadline.
            self.open_until
                .store(self.clock.at(deadline), Ordering::Release);
        }
        let Some(next) = self.word.advance(word, to, permits) else {
            return;
        };
        self.metrics.state(to);
        tracing::info!(breaker = %self.name, from = from.as_str(), to = to.as_str(), "circuit breaker state changed");
        let _ = self.config.events.send(StateTransition {
            breaker: self.name.clone(),
            from,
            to,
        });
        if to == CircuitState::Open {
            self.schedule_half_open(deadline, next.generation());
        }
    }

    /// Turns the breaker half-open when its wait is over, even if no call comes to notice.
    fn schedule_half_open(&self, deadline: Instant, generation_opened: u64) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // The next call or state read makes the transition instead.
        };
        let breaker = self.me.clone();
        runtime.spawn(async move {
            tokio::time::sleep_until(deadline).await;
            if let Some(breaker) = breaker.upgrade() {
                breaker.half_open_after_wait(generation_opened);
            }
        });
    }
}

/// How a call admitted by a breaker ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    Failure,
    Ignored,
}

impl From<Classification> for Outcome {
    fn from(classification: Classification) -> Outcome {
        match classification {
            Classification::Failure => Outcome::Failure,
            Classification::Success => Outcome::Success,
            Classification::Ignore => Outcome::Ignored,
        }
    }
}

/// A call admitted by a breaker. Dropped without [`Permit::record`] (the caller's future was
/// dropped), it counts as ignored and gives its half-open permit back.
pub(crate) struct Permit {
    breaker: Option<Arc<Breaker>>,
    generation: u64,
    started: Instant,
}

impl Permit {
    pub(crate) fn record(mut self, outcome: Outcome) {
        if let Some(breaker) = self.breaker.take() {
            breaker.record(self.generation, outcome, self.started.elapsed());
        }
    }
}

impl std::fmt::Debug for Permit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permit")
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(breaker) = self.breaker.take() {
            breaker.record(self.generation, Outcome::Ignored, Duration::ZERO);
        }
    }
}
