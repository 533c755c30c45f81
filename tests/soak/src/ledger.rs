//! The servers' record of requests executed, per call number: one ledger for the POSTs (each
//! must be executed once at most), one for the GETs (where a call's second request is a retry or
//! a hedge).
//!
//! Keys are the load generator's call numbers, so the ledger is a flat array of counters sized
//! once at start: it does not grow during the run and so does not blur the memory check.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// How many times each call key was executed, across every instance.
pub(crate) struct Ledger {
    counts: Vec<AtomicU8>,
    /// Keys that were not a call number within range (never expected).
    foreign: AtomicU64,
}

impl Ledger {
    /// A ledger for keys `0..capacity`, every page touched now.
    pub(crate) fn new(capacity: usize) -> Ledger {
        Ledger {
            counts: (0..capacity).map(|_| AtomicU8::new(0)).collect(),
            foreign: AtomicU64::new(0),
        }
    }

    /// Counts one execution of `key`, a call number in text.
    pub(crate) fn executed(&self, key: &str) {
        self.executed_number(key.parse().unwrap_or(u64::MAX));
    }

    /// Counts one execution of call number `n`.
    pub(crate) fn executed_number(&self, n: u64) {
        let slot = usize::try_from(n).ok().and_then(|n| self.counts.get(n));
        match slot {
            Some(count) => {
                let _ = count.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                    Some(c.saturating_add(1))
                });
            }
            None => {
                self.foreign.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Keys executed more than once, with their counts.
    pub(crate) fn duplicates(&self) -> Vec<(usize, u8)> {
        self.counts
            .iter()
            .enumerate()
            .map(|(key, count)| (key, count.load(Ordering::Relaxed)))
            .filter(|&(_, count)| count > 1)
            .collect()
    }

    /// Keys executed at least once.
    pub(crate) fn executed_keys(&self) -> usize {
        self.counts
            .iter()
            .filter(|count| count.load(Ordering::Relaxed) > 0)
            .count()
    }

    /// How many times `key` was executed (at most 255).
    pub(crate) fn count(&self, key: u64) -> u8 {
        usize::try_from(key)
            .ok()
            .and_then(|key| self.counts.get(key))
            .map_or(0, |count| count.load(Ordering::Relaxed))
    }

    /// Executions of every key together.
    pub(crate) fn total(&self) -> u64 {
        self.counts
            .iter()
            .map(|count| u64::from(count.load(Ordering::Relaxed)))
            .sum()
    }

    /// Keys outside the expected range.
    pub(crate) fn foreign(&self) -> u64 {
        self.foreign.load(Ordering::Relaxed)
    }
}
