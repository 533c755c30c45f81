//! One circuit breaker: Resilience4j's closed → open → half-open state machine.
//!
//! The state, the half-open permits left and a generation share one atomic word
//! ([`super::word`]), so admitting a call is a load in the closed state and one compare-and-swap
//! in the half-open state (which is why exactly the permitted number of calls get through,
//! however many race). Outcomes go to small mutex-protected windows ([`super::outcomes`]);
//! transitions happen under that mutex and bump the generation, so the outcome of a call
//! admitted before a transition is never counted after it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use tokio::time::Instant;

use super::classify::Classification;
use super::config::CircuitBreakerConfig;
use super::metrics::{BreakerMetrics, CallKind};
use super::outcomes::{Thresholds, Windows};
use super::state::{CircuitState, StateTransition};
use super::word::{Admission, StateWord, Word};
use crate::clock::Clock;
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
    fn half_open_after_wait(&self, generation_seen: u64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> CircuitBreakerConfig {
        CircuitBreakerConfig::default()
            .sliding_window_size(4)
            .minimum_number_of_calls(4)
            .permitted_number_of_calls_in_half_open_state(2)
            .wait_duration_in_open_state(Duration::from_secs(1))
    }

    fn call(breaker: &Arc<Breaker>, outcome: Outcome) -> Result<(), Error> {
        breaker.acquire().map(|permit| permit.record(outcome))
    }

    #[tokio::test(start_paused = true)]
    async fn walks_the_state_machine() {
        let config = config();
        let mut events = config.subscribe();
        let breaker = Breaker::new("OrderService#get_order", &config);
        for outcome in [Outcome::Failure, Outcome::Failure, Outcome::Success] {
            call(&breaker, outcome).unwrap();
        }
        assert_eq!(breaker.state(), CircuitState::Closed);
        call(&breaker, Outcome::Success).unwrap();
        assert_eq!(breaker.state(), CircuitState::Open);
        let refused = call(&breaker, Outcome::Success).unwrap_err();
        assert!(refused.is_circuit_open());
        assert!(refused.to_string().contains("OrderService#get_order"));

        tokio::time::advance(Duration::from_secs(1)).await;
        tokio::task::yield_now().await;
        assert_eq!(breaker.state(), CircuitState::HalfOpen);
        let first = breaker.acquire().unwrap();
        let second = breaker.acquire().unwrap();
        assert!(breaker.acquire().unwrap_err().is_circuit_open());
        // A dropped call gives its permit back.
        drop(second);
        let second = breaker.acquire().unwrap();
        first.record(Outcome::Success);
        second.record(Outcome::Success);
        assert_eq!(breaker.state(), CircuitState::Closed);

        let seen: Vec<_> = std::iter::from_fn(|| events.try_recv().ok())
            .map(|t| (t.from, t.to))
            .collect();
        assert_eq!(
            seen,
            [
                (CircuitState::Closed, CircuitState::Open),
                (CircuitState::Open, CircuitState::HalfOpen),
                (CircuitState::HalfOpen, CircuitState::Closed),
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn outcomes_of_an_older_state_are_not_counted() {
        let breaker = Breaker::new("b", &config());
        let late = breaker.acquire().unwrap();
        for _ in 0..4 {
            call(&breaker, Outcome::Failure).unwrap();
        }
        assert_eq!(breaker.state(), CircuitState::Open);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(breaker.state(), CircuitState::HalfOpen);
        // Admitted while closed: must not use up a half-open trial.
        late.record(Outcome::Success);
        call(&breaker, Outcome::Failure).unwrap();
        assert_eq!(breaker.state(), CircuitState::HalfOpen);
        call(&breaker, Outcome::Failure).unwrap();
        assert_eq!(breaker.state(), CircuitState::Open);
    }

    #[tokio::test(start_paused = true)]
    async fn slow_calls_open_the_breaker() {
        let config = config().slow_call_duration_threshold(Duration::from_millis(100));
        let breaker = Breaker::new("b", &config);
        for _ in 0..4 {
            let permit = breaker.acquire().unwrap();
            tokio::time::advance(Duration::from_millis(100)).await;
            permit.record(Outcome::Success);
        }
        assert_eq!(breaker.state(), CircuitState::Open);
    }

    /// Threads race for the trial calls of a half-open breaker, round after round: each round
    /// exactly the permitted number get through.
    #[test]
    fn half_open_permits_are_exact_under_contention() {
        const THREADS: usize = 8;
        const TRIES: usize = 500;
        let config = CircuitBreakerConfig::default()
            .sliding_window_size(1)
            .minimum_number_of_calls(1)
            .wait_duration_in_open_state(Duration::from_millis(1));
        let breaker = Breaker::new("stress", &config);
        call(&breaker, Outcome::Failure).unwrap();
        for round in 0..50 {
            std::thread::sleep(Duration::from_millis(2));
            let start = std::sync::Barrier::new(THREADS);
            let admitted: Vec<Permit> = std::thread::scope(|scope| {
                let racers: Vec<_> = (0..THREADS)
                    .map(|_| {
                        scope.spawn(|| {
                            start.wait();
                            (0..TRIES)
                                .filter_map(|_| breaker.acquire().ok())
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                racers
                    .into_iter()
                    .flat_map(|racer| racer.join().unwrap())
                    .collect()
            });
            assert_eq!(admitted.len(), 10, "round {round}");
            // Five failures of ten: 50 %, the breaker opens again.
            for (i, permit) in admitted.into_iter().enumerate() {
                let outcome = if i % 2 == 0 {
                    Outcome::Failure
                } else {
                    Outcome::Success
                };
                permit.record(outcome);
            }
            assert_eq!(breaker.word.load().state(), CircuitState::Open);
        }
    }
}
