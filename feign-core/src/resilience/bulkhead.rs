//! The bulkhead: a cap on the calls of one client in flight at once.

use std::sync::Arc;

use ::metrics::Gauge;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::config::BulkheadConfig;
use super::metrics::bulkhead_available;
use crate::Error;

/// A semaphore of `max_concurrent_calls` slots. Callers waiting for a slot wait in the
/// semaphore's queue, one entry per caller: nothing else grows.
pub(crate) struct Bulkhead {
    name: Arc<str>,
    config: BulkheadConfig,
    slots: Arc<Semaphore>,
    available: Gauge,
}

/// A call's slot; dropping it frees the slot.
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
    available: Gauge,
}

impl Bulkhead {
    pub(crate) fn new(name: &str, config: BulkheadConfig) -> Bulkhead {
        let available = bulkhead_available(name);
        available.set(f64::from(config.max_concurrent_calls));
        Bulkhead {
            name: name.into(),
            config,
            slots: Arc::new(Semaphore::new(config.max_concurrent_calls as usize)),
            available,
        }
    }

    /// Takes a slot, waiting at most `max_wait_duration`, or fails with
    /// [`Error::is_bulkhead_full`].
    pub(crate) async fn enter(&self) -> Result<Slot, Error> {
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) if self.config.max_wait_duration.is_zero() => None,
            Err(_) => tokio::time::timeout(
                self.config.max_wait_duration,
                self.slots.clone().acquire_owned(),
            )
            .await
            .ok()
            .and_then(Result::ok),
        };
        match permit {
            Some(permit) => {
                self.available.decrement(1.0);
                Ok(Slot {
                    _permit: permit,
                    available: self.available.clone(),
                })
            }
            None => Err(Error::bulkhead_full(
                &self.name,
                self.config.max_concurrent_calls,
            )),
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.available.increment(1.0);
    }
}
