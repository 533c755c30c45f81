//! A live client's state (feature `config`): the core its calls start from, swapped whole when
//! its properties change. A call keeps the core it started with to its end.

use std::sync::Arc;

use super::{Core, CoreInner};
use crate::sync::ArcSwap;

/// The core a live client's calls start from.
pub(crate) struct LiveCore {
    current: ArcSwap<CoreInner>,
}

impl Core {
    /// This core, made live: calls start from what [`LiveCore::store`] last put in force.
    pub(crate) fn into_live(self) -> (Core, Arc<LiveCore>) {
        let live = Arc::new(LiveCore {
            current: ArcSwap::new(self.inner.clone()),
        });
        let core = Core {
            inner: self.inner,
            live: Some(live.clone()),
        };
        (core, live)
    }
}

impl LiveCore {
    /// The core a call starts from.
    pub(super) fn snapshot(&self) -> Core {
        Core {
            inner: self.current.load_full(),
            live: None,
        }
    }

    /// What is in force now.
    pub(crate) fn current(&self) -> Arc<CoreInner> {
        self.current.load_full()
    }

    /// Puts `core` in force for the calls that start from now on.
    pub(crate) fn store(&self, core: Core) {
        self.current.store(core.inner);
    }
}
