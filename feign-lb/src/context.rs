//! What one pick works with besides the snapshot: the clock, read at most once and only when
//! needed, and the thread's random source.

use std::cell::Cell;

use crate::clock::Clock;
use crate::rng::LocalRng;

/// The clock and random source of one pick.
pub(crate) struct PickContext<'a> {
    clock: &'a Clock,
    /// The time read for this pick (0: not read yet).
    now_ns: Cell<u64>,
    /// The thread's random source for the service.
    pub(crate) rng: &'a LocalRng,
}

impl<'a> PickContext<'a> {
    /// A context that reads `clock` when first asked the time.
    pub(crate) fn new(clock: &'a Clock, rng: &'a LocalRng) -> Self {
        PickContext {
            clock,
            now_ns: Cell::new(0),
            rng,
        }
    }

    /// The time of the pick, read from the clock on first use.
    pub(crate) fn now(&self) -> u64 {
        let v = self.now_ns.get();
        if v != 0 {
            return v;
        }
        let v = self.clock.now();
        self.now_ns.set(v);
        v
    }
}
