//! A version counter whose changes can be awaited, for suppliers.

use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::BoxFuture;
use tokio::sync::watch;

/// A growing version number with a way to await its next change.
#[derive(Debug)]
pub(crate) struct Versioned {
    version: AtomicU64,
    tx: watch::Sender<u64>,
}

impl Default for Versioned {
    fn default() -> Self {
        let (tx, _) = watch::channel(1);
        Versioned {
            version: AtomicU64::new(1),
            tx,
        }
    }
}

impl Versioned {
    pub(crate) fn get(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Moves the version on and wakes everyone waiting.
    pub(crate) fn bump(&self) {
        let v = self.version.fetch_add(1, Ordering::AcqRel) + 1;
        self.tx.send_replace(v);
    }

    /// Resolves once the version is past `seen`.
    pub(crate) fn changed(&self, seen: u64) -> BoxFuture<'static, ()> {
        let mut rx = self.tx.subscribe();
        Box::pin(async move {
            loop {
                if *rx.borrow_and_update() > seen {
                    return;
                }
                if rx.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        })
    }
}
