//! Guarantees one `AttemptOutcome` per chosen instance, even when the call is dropped.

use std::sync::Arc;

use tokio::time::Instant;

use crate::resolve::{AttemptOutcome, CallObserver};

/// Reports how an attempt ended to its instance's observer, exactly once: through
/// [`AttemptGuard::finish`], or as `Discarded` when dropped unfinished.
pub(crate) struct AttemptGuard {
    observer: Option<Arc<dyn CallObserver>>,
    started: Instant,
}

impl AttemptGuard {
    pub(crate) fn new(observer: Option<Arc<dyn CallObserver>>) -> Self {
        AttemptGuard {
            observer,
            started: Instant::now(),
        }
    }

    pub(crate) fn finish(mut self, outcome: &AttemptOutcome<'_>) {
        if let Some(observer) = self.observer.take() {
            observer.on_complete(outcome, self.started.elapsed());
        }
    }
}

impl Drop for AttemptGuard {
    fn drop(&mut self) {
        if let Some(observer) = self.observer.take() {
            observer.on_complete(&AttemptOutcome::Discarded, self.started.elapsed());
        }
    }
}
