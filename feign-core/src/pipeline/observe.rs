//! Guarantees one `AttemptOutcome` per chosen instance, even when the call is dropped.

use tokio::time::Instant;

use crate::resolve::{AttemptOutcome, Chosen};

/// Reports how an attempt ended to its chosen instance's observer, exactly once: through
/// [`AttemptGuard::finish`], or as `Discarded` when dropped unfinished.
pub(crate) struct AttemptGuard {
    chosen: Option<Chosen>,
    started: Instant,
}

impl AttemptGuard {
    pub(crate) fn new(chosen: Option<Chosen>) -> Self {
        AttemptGuard {
            chosen,
            started: Instant::now(),
        }
    }

    pub(crate) fn finish(mut self, outcome: &AttemptOutcome<'_>) {
        if let Some(chosen) = self.chosen.take() {
            chosen.complete(outcome, self.started.elapsed());
        }
    }
}

impl Drop for AttemptGuard {
    fn drop(&mut self) {
        if let Some(chosen) = self.chosen.take() {
            chosen.complete(&AttemptOutcome::Discarded, self.started.elapsed());
        }
    }
}
