//! A circuit breaker's state word: the state, the half-open permits left and a generation in
//! one `AtomicU64`. Admitting a call is a load in the closed state and one compare-and-swap in
//! the half-open state, which is why exactly the permitted number of calls get through however
//! many race; a transition bumps the generation, so nothing done in an older state (a permit
//! given back, a second transition) lands in a newer one.
//!
//! Checked by the `breaker` models of `tests/loom/`.

use super::state::CircuitState;
use crate::sync::{AtomicU64, Ordering};

// State in bits 0-1, half-open permits left in bits 2-33, generation above.
const STATE_MASK: u64 = 0b11;
const PERMITS_SHIFT: u32 = 2;
const PERMITS_MASK: u64 = 0xFFFF_FFFF;
const GENERATION_SHIFT: u32 = 34;
const ONE_PERMIT: u64 = 1 << PERMITS_SHIFT;

/// One reading of a [`StateWord`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Word(u64);

impl Word {
    pub(super) fn new(state: CircuitState, permits: u32, generation: u64) -> Word {
        let state = match state {
            CircuitState::Closed => 0,
            CircuitState::Open => 1,
            CircuitState::HalfOpen => 2,
        };
        Word(state | (u64::from(permits) << PERMITS_SHIFT) | (generation << GENERATION_SHIFT))
    }

    pub(super) fn state(self) -> CircuitState {
        match self.0 & STATE_MASK {
            0 => CircuitState::Closed,
            1 => CircuitState::Open,
            _ => CircuitState::HalfOpen,
        }
    }

    /// The half-open permits left.
    pub(super) fn permits(self) -> u32 {
        ((self.0 >> PERMITS_SHIFT) & PERMITS_MASK) as u32
    }

    pub(super) fn generation(self) -> u64 {
        self.0 >> GENERATION_SHIFT
    }
}

/// What [`StateWord::admit`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Admission {
    /// A call is admitted in this generation (closed, or one half-open permit taken).
    Admitted(u64),
    /// The breaker is open, as of this word.
    Open(Word),
    /// Half-open with every permit taken.
    Full,
}

/// The state word itself.
#[derive(Debug)]
pub(super) struct StateWord(AtomicU64);

impl StateWord {
    /// Closed, in generation 0.
    pub(super) fn new() -> StateWord {
        StateWord(AtomicU64::new(Word::new(CircuitState::Closed, 0, 0).0))
    }

    pub(super) fn load(&self) -> Word {
        Word(self.0.load(Ordering::Acquire))
    }

    /// Admits a call: closed admits at once, half-open takes a permit if one is left.
    pub(super) fn admit(&self) -> Admission {
        loop {
            let word = self.load();
            match word.state() {
                CircuitState::Closed => return Admission::Admitted(word.generation()),
                CircuitState::Open => return Admission::Open(word),
                CircuitState::HalfOpen => {
                    if word.permits() == 0 {
                        return Admission::Full;
                    }
                    if self
                        .0
                        .compare_exchange_weak(
                            word.0,
                            word.0 - ONE_PERMIT,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        )
                        .is_ok()
                    {
                        return Admission::Admitted(word.generation());
                    }
                }
            }
        }
    }

    /// Returns the half-open permit of a call admitted in `generation` that was not recorded;
    /// nothing once the breaker has left that generation.
    pub(super) fn give_back(&self, generation: u64) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |word| {
                let word = Word(word);
                (word.state() == CircuitState::HalfOpen && word.generation() == generation)
                    .then_some(word.0 + ONE_PERMIT)
            });
    }

    /// Moves from `seen` to `to` with `permits` (half-open ones), in the next generation, unless
    /// the breaker already left `seen`'s generation. Half-open callers may take permits
    /// meanwhile: only the generation must match. Returns the new word when it moved.
    pub(super) fn advance(&self, seen: Word, to: CircuitState, permits: u32) -> Option<Word> {
        let next_generation = seen.generation().wrapping_add(1) & (u64::MAX >> GENERATION_SHIFT);
        let next = Word::new(to, permits, next_generation);
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |current| {
                (Word(current).generation() == seen.generation()).then_some(next.0)
            })
            .ok()
            .map(|_| next)
    }
}
