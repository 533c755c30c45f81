//! The breakers of one client: one in all, or one per method created on its first call.

use std::sync::Arc;

use super::breaker::{Breaker, Permit};
use super::config::{BreakerScope, CircuitBreakerConfig};
use crate::cow_map::CopyOnWriteMap;
use crate::meta::MethodMeta;
use crate::Error;

/// Per-method breakers live in a copy-on-write map, so the lookup on every call takes no lock.
pub(crate) enum Breakers {
    PerClient(Arc<Breaker>),
    PerMethod {
        config: CircuitBreakerConfig,
        by_key: CopyOnWriteMap<&'static str, Arc<Breaker>>,
    },
}

impl Breakers {
    pub(crate) fn new(service: &str, config: CircuitBreakerConfig) -> Breakers {
        match config.scope {
            BreakerScope::PerClient => Breakers::PerClient(Breaker::new(service, &config)),
            BreakerScope::PerMethod => Breakers::PerMethod {
                config,
                by_key: CopyOnWriteMap::new(),
            },
        }
    }

    /// Asks the breaker of `meta` to admit a call.
    pub(crate) fn acquire(&self, meta: &'static MethodMeta) -> Result<Permit, Error> {
        match self {
            Breakers::PerClient(breaker) => breaker.acquire(),
            Breakers::PerMethod { config, by_key } => by_key.with(
                meta.key,
                || Breaker::new(meta.key, config),
                |breaker| breaker.acquire(),
            ),
        }
    }
}
