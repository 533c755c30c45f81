//! The circuit breaker's state word: half-open admits at most the permitted number of calls, a
//! permit given back is never lost nor doubled, and a transition is never undone by anything
//! done in an older generation (a late permit given back, a second transition from the same
//! state), so the word never holds an impossible state such as closed with permits left. And
//! the outcomes recorded under the breaker's lock: none of the current state is lost, none of
//! an older state counts, and they move the breaker once.

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

use super::outcomes::{Thresholds, Windows};
use super::state::CircuitState;
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

/// A breaker reduced to its state word and its windows, recording as `Breaker::record` and
/// `Breaker::transition` do: under the windows' lock, the outcome counted against the word
/// read there, and the transition it calls for made (windows cleared, word advanced).
struct Breaker {
    word: StateWord,
    windows: Mutex<Windows>,
}

impl Breaker {
    fn record(&self, generation: u64, failed: bool) {
        let mut windows = self.windows.lock().unwrap();
        let word = self.word.load();
        if let Some(to) = windows.record(word, generation, failed, false) {
            windows.clear();
            let permits = if to == CircuitState::HalfOpen {
                PERMITTED
            } else {
                0
            };
            self.word.advance(word, to, permits);
        }
    }
}

/// Two half-open trial calls fail while a call admitted before the breaker opened reports a
/// success late: the late success is not counted (it would make the failure rate 50 %, under the
/// 60 % threshold, and close the breaker), neither failure is lost (the round would never end),
/// and the breaker opens once, into the next generation.
#[test]
fn trial_outcomes_decide_the_round_once() {
    check(2, || {
        let thresholds = Thresholds {
            failure_rate: 60.0,
            slow_call_rate: 100.0,
            minimum_calls: 4,
            trials: PERMITTED as usize,
        };
        let breaker = Arc::new(Breaker {
            word: StateWord::new(),
            windows: Mutex::new(Windows::new(4, thresholds)),
        });
        let Admission::Admitted(closed) = breaker.word.admit() else {
            panic!("closed refused a call");
        };
        breaker
            .word
            .advance(breaker.word.load(), CircuitState::HalfOpen, PERMITTED)
            .expect("the only transition");
        let trials: Vec<_> = (0..2)
            .map(|_| {
                let breaker = breaker.clone();
                thread::spawn(move || {
                    let Admission::Admitted(generation) = breaker.word.admit() else {
                        panic!("a trial call refused");
                    };
                    breaker.record(generation, true);
                })
            })
            .collect();
        let late = {
            let breaker = breaker.clone();
            thread::spawn(move || breaker.record(closed, false))
        };
        for t in trials {
            t.join().unwrap();
        }
        late.join().unwrap();
        assert_eq!(breaker.word.load(), Word::new(CircuitState::Open, 0, 2));
    });
}
