//! The run's journal: every fault, recovery and failed call, stamped in ms since start.

use std::sync::Mutex;
use std::time::Instant;

/// Entries kept at most; later ones are only counted, so a broken run cannot exhaust memory.
const KEPT: usize = 20_000;

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A fault switched on.
    Fault,
    /// A fault undone.
    Recovery,
    /// A call that failed.
    Error,
    /// Anything else worth a line (phases, convergence).
    Note,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Fault => "FAULT",
            Kind::Recovery => "RECOVER",
            Kind::Error => "ERROR",
            Kind::Note => "NOTE",
        }
    }
}

/// One line of the journal.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Milliseconds since the run started.
    pub(crate) at_ms: u64,
    /// What it is.
    pub(crate) kind: Kind,
    /// What happened.
    pub(crate) text: String,
}

/// The run's clock and its journal.
pub(crate) struct Journal {
    started: Instant,
    entries: Mutex<Vec<Entry>>,
    dropped: Mutex<u64>,
}

impl Journal {
    /// A journal whose clock starts now.
    pub(crate) fn new() -> Journal {
        Journal {
            started: Instant::now(),
            entries: Mutex::new(Vec::with_capacity(1024)),
            dropped: Mutex::new(0),
        }
    }

    /// Milliseconds since start.
    pub(crate) fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// When the run started.
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    /// Records an entry stamped now, and prints faults, recoveries and notes as they happen.
    pub(crate) fn record(&self, kind: Kind, text: impl Into<String>) {
        let entry = Entry {
            at_ms: self.now_ms(),
            kind,
            text: text.into(),
        };
        if kind != Kind::Error {
            println!("{}", line(&entry));
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() < KEPT {
            entries.push(entry);
        } else {
            *self.dropped.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        }
    }

    /// Every entry kept, in order, and how many were only counted.
    pub(crate) fn entries(&self) -> (Vec<Entry>, u64) {
        let entries = self
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let dropped = *self.dropped.lock().unwrap_or_else(|e| e.into_inner());
        (entries, dropped)
    }
}

/// An entry as the report prints it.
pub(crate) fn line(entry: &Entry) -> String {
    format!(
        "{:>9} ms  {:<7}  {}",
        entry.at_ms,
        entry.kind.label(),
        entry.text
    )
}
