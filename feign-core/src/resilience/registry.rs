//! The breakers of one client: one in all, or one per method created on its first call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;

use super::breaker::{Breaker, Permit};
use super::config::{BreakerScope, CircuitBreakerConfig};
use crate::meta::MethodMeta;
use crate::Error;

/// Per-method breakers live in a map swapped whole on the rare insert, so the lookup on every
/// call takes no lock.
pub(crate) enum Breakers {
    PerClient(Arc<Breaker>),
    PerMethod {
        config: CircuitBreakerConfig,
        by_key: ArcSwap<HashMap<&'static str, Arc<Breaker>>>,
        inserting: Mutex<()>,
    },
}

impl Breakers {
    pub(crate) fn new(service: &str, config: CircuitBreakerConfig) -> Breakers {
        match config.scope {
            BreakerScope::PerClient => Breakers::PerClient(Breaker::new(service, &config)),
            BreakerScope::PerMethod => Breakers::PerMethod {
                config,
                by_key: ArcSwap::default(),
                inserting: Mutex::new(()),
            },
        }
    }

    /// Asks the breaker of `meta` to admit a call.
    pub(crate) fn acquire(&self, meta: &'static MethodMeta) -> Result<Permit, Error> {
        match self {
            Breakers::PerClient(breaker) => breaker.acquire(),
            Breakers::PerMethod {
                config,
                by_key,
                inserting,
            } => {
                if let Some(breaker) = by_key.load().get(meta.key) {
                    return breaker.acquire();
                }
                let _inserting = inserting.lock().unwrap_or_else(PoisonError::into_inner);
                let current = by_key.load_full();
                let breaker = match current.get(meta.key) {
                    Some(breaker) => breaker.clone(),
                    None => {
                        let breaker = Breaker::new(meta.key, config);
                        let mut next = HashMap::clone(&current);
                        next.insert(meta.key, breaker.clone());
                        by_key.store(Arc::new(next));
                        breaker
                    }
                };
                breaker.acquire()
            }
        }
    }
}
