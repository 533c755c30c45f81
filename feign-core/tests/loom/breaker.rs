//! The circuit breaker's state word: half-open admits at most the permitted number of calls, a
//! permit given back is never lost nor doubled, and a transition is never undone by anything
//! done in an older generation (a late permit given back, a second transition from the same
//! state), so the word never holds an impossible state such as closed with permits left. And
//! the breaker itself (`Breaker::acquire`, `record`, `transition`): the outcomes recorded
//! under its lock, none of the current state lost, none of an older state counted, move it
//! once; the turn from open to half-open, raced by callers and the timer, happens once.

use std::sync::Arc as StdArc;
use std::time::Duration;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;
use tokio::sync::broadcast;

use super::breaker::{Breaker, Outcome};
use super::config::CircuitBreakerConfig;
use super::state::{CircuitState, StateTransition};
use super::word::{Admission, StateWord, Word};
use crate::check;

const PERMITTED: u32 = 2;

/// A half-open word with `PERMITTED` permits, in generation 1.
fn half_open() -> Arc<StateWord> {
    let word = StateWord::new();
    let closed = word.load();
    word.advance(closed, CircuitState::HalfOpen, PERMITTED)
        .expect("the only transition");
    Arc::new(word)
}

/// Three racers for two trial calls, one of which gives its permit back (a call dropped before
/// its outcome): at no point are more than two calls admitted and unreturned, and afterwards
/// the permits left are exactly those neither held nor taken.
#[test]
fn half_open_admits_at_most_the_permitted_calls() {
    check(2, || {
        let word = half_open();
        let holding = Arc::new(AtomicUsize::new(0));
        let racers: Vec<_> = (0..3)
            .map(|racer| {
                let (word, holding) = (word.clone(), holding.clone());
                thread::spawn(move || match word.admit() {
                    Admission::Admitted(generation) => {
                        assert_eq!(generation, 1);
                        let now = holding.fetch_add(1, Ordering::SeqCst) + 1;
                        assert!(now <= PERMITTED as usize, "{now} trial calls admitted");
                        if racer == 0 {
                            holding.fetch_sub(1, Ordering::SeqCst);
                            word.give_back(generation);
                            return false;
                        }
                        true
                    }
                    Admission::Full => false,
                    Admission::Open(word) => panic!("half-open read as open: {word:?}"),
                })
            })
            .collect();
        let kept = racers
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&kept| kept)
            .count() as u32;
        let after = word.load();
        assert_eq!(after.state(), CircuitState::HalfOpen);
        assert_eq!(after.generation(), 1);
        assert_eq!(after.permits() + kept, PERMITTED, "permits lost or doubled");
    });
}

/// A trial call gives its permit back while the breaker closes: the closed word keeps no permit.
#[test]
fn a_late_permit_does_not_land_in_the_next_state() {
    check(3, || {
        let word = half_open();
        let caller = {
            let word = word.clone();
            thread::spawn(move || {
                if let Admission::Admitted(generation) = word.admit() {
                    word.give_back(generation);
                }
            })
        };
        let seen = word.load();
        let closed = word.advance(seen, CircuitState::Closed, 0);
        caller.join().unwrap();
        assert_eq!(closed, Some(Word::new(CircuitState::Closed, 0, 2)));
        assert_eq!(word.load(), Word::new(CircuitState::Closed, 0, 2));
    });
}

/// Two transitions from the same half-open word (two trial outcomes concluding at once, or an
/// outcome and the open timer): exactly one moves the breaker, into the next generation, while
/// a third thread takes and returns permits.
#[test]
fn one_of_two_transitions_from_a_state_wins() {
    check(2, || {
        let word = half_open();
        let seen = word.load();
        let movers: Vec<_> = [CircuitState::Open, CircuitState::Closed]
            .into_iter()
            .map(|to| {
                let word = word.clone();
                thread::spawn(move || word.advance(seen, to, 0))
            })
            .collect();
        let caller = {
            let word = word.clone();
            thread::spawn(move || {
                if let Admission::Admitted(generation) = word.admit() {
                    word.give_back(generation);
                }
            })
        };
        let moved: Vec<Word> = movers
            .into_iter()
            .filter_map(|t| t.join().unwrap())
            .collect();
        caller.join().unwrap();
        assert_eq!(moved.len(), 1, "transitions: {moved:?}");
        assert_eq!(word.load(), moved[0]);
        assert_eq!(moved[0].generation(), 2);
        assert_eq!(moved[0].permits(), 0);
    });
}

/// The breaker's settings in the models: a window of 4 calls that must all be recorded, 60 %
/// failures to open, `PERMITTED` trial calls, and no wait in the open state (the clock is the
/// real one: a wait of zero is over at once), so an open breaker turns half-open as soon as a
/// caller or the timer looks.
fn config() -> CircuitBreakerConfig {
    CircuitBreakerConfig::default()
        .sliding_window_size(4)
        .minimum_number_of_calls(4)
        .failure_rate_threshold(60.0)
        .permitted_number_of_calls_in_half_open_state(PERMITTED)
        .wait_duration_in_open_state(Duration::ZERO)
}

/// The transitions the breaker announced so far.
fn transitions(
    events: &mut broadcast::Receiver<StateTransition>,
) -> Vec<(CircuitState, CircuitState)> {
    std::iter::from_fn(|| events.try_recv().ok())
        .map(|t| (t.from, t.to))
        .collect()
}

/// A breaker opened by four failures, in generation 1.
fn opened(config: &CircuitBreakerConfig) -> StdArc<Breaker> {
    let breaker = Breaker::new("OrderService#get_order", config);
    for _ in 0..4 {
        breaker
            .acquire()
            .expect("closed admits")
            .record(Outcome::Failure);
    }
    assert_eq!(breaker.word_state(), CircuitState::Open);
    breaker
}

/// Two half-open trial calls fail while a call admitted before the breaker opened reports a
/// success late, through the breaker's own `record` and `transition`: the late success is not
/// counted (it would make the failure rate 50 %, under the 60 % threshold, and close the
/// breaker), neither failure is lost (the round would never end), and the breaker opens once
/// more, announcing each transition once.
#[test]
fn trial_outcomes_decide_the_round_once() {
    check(2, || {
        let config = config();
        let mut events = config.subscribe();
        let breaker = Breaker::new("OrderService#get_order", &config);
        let late = breaker.acquire().expect("closed admits");
        for _ in 0..4 {
            breaker
                .acquire()
                .expect("closed admits")
                .record(Outcome::Failure);
        }
        // The wait is over at once: the first trial call turns the breaker half-open.
        let trials = [(); 2].map(|_| breaker.acquire().expect("a trial call"));
        assert_eq!(breaker.word_state(), CircuitState::HalfOpen);
        let recorders: Vec<_> = trials
            .into_iter()
            .map(|trial| thread::spawn(move || trial.record(Outcome::Failure)))
            .collect();
        let late = thread::spawn(move || late.record(Outcome::Success));
        for recorder in recorders {
            recorder.join().unwrap();
        }
        late.join().unwrap();
        assert_eq!(breaker.word_state(), CircuitState::Open);
        assert_eq!(
            transitions(&mut events),
            [
                (CircuitState::Closed, CircuitState::Open),
                (CircuitState::Open, CircuitState::HalfOpen),
                (CircuitState::HalfOpen, CircuitState::Open),
            ]
        );
    });
}

/// An open breaker whose wait is over, as two callers `acquire` and the timer turns it
/// half-open: the turn happens once (one announcement), exactly the permitted trial calls
/// are admitted and the others refused as open, and a trial call dropped without an outcome
/// gives its permit back.
#[test]
fn the_turn_to_half_open_happens_once_under_callers_and_the_timer() {
    check(2, || {
        let config = config().permitted_number_of_calls_in_half_open_state(1);
        let mut events = config.subscribe();
        let breaker = opened(&config);
        let callers: Vec<_> = (0..2)
            .map(|_| {
                let breaker = breaker.clone();
                thread::spawn(move || breaker.acquire())
            })
            .collect();
        let timer = {
            let breaker = breaker.clone();
            thread::spawn(move || breaker.half_open_after_wait(1))
        };
        let answers: Vec<_> = callers.into_iter().map(|c| c.join().unwrap()).collect();
        timer.join().unwrap();
        let admitted = answers.iter().filter(|answer| answer.is_ok()).count();
        assert_eq!(admitted, 1, "one trial call for one permit");
        assert!(answers
            .iter()
            .filter_map(|answer| answer.as_ref().err())
            .all(|error| error.is_circuit_open()));
        assert_eq!(breaker.word_state(), CircuitState::HalfOpen);
        assert_eq!(
            transitions(&mut events),
            [
                (CircuitState::Closed, CircuitState::Open),
                (CircuitState::Open, CircuitState::HalfOpen),
            ]
        );
        drop(answers);
        let again = breaker.acquire();
        assert!(again.is_ok(), "the dropped trial call gave its permit back");
    });
}
