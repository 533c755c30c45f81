//! The circuit breaker's state word: half-open admits at most the permitted number of calls, a
//! permit given back is never lost nor doubled, and a transition is never undone by anything
//! done in an older generation (a late permit given back, a second transition from the same
//! state), so the word never holds an impossible state such as closed with permits left.

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

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
