//! Circuit breakers, bulkheads and fallbacks around whole calls, as Spring Cloud OpenFeign
//! wraps a Feign call in Resilience4j.
//!
//! The guard sits outside the retries: a call is admitted by its circuit breaker, takes a slot
//! in the client's bulkhead, runs (interceptors, attempts, retries), and its one outcome is
//! classified and recorded. None of it is on by default.
//!
//! | piece | turn on with | default when on |
//! |---|---|---|
//! | circuit breaker | [`Builder::circuit_breaker`](crate::Builder::circuit_breaker) with a [`CircuitBreakerConfig`] | Resilience4j's: 50 % failures, window 100, minimum 100 calls, 60 s open, 10 half-open calls, slow calls 100 % over 60 s; one breaker per method |
//! | bulkhead | [`Builder::bulkhead`](crate::Builder::bulkhead) with a [`BulkheadConfig`] | 25 concurrent calls, no wait |
//! | adaptive concurrency limit | [`Builder::adaptive_concurrency`](crate::Builder::adaptive_concurrency) with an [`AdaptiveLimitConfig`] | starts at 20, between 3 and 1000, recomputed every 100 ms |
//! | classifier | [`Builder::failure_classifier`](crate::Builder::failure_classifier) | [`DefaultClassifier`]: 5xx, timeouts, connection failures fail; 4xx do not |
//! | fallback | `fallback = Type` / `fallback_factory = Type` in `#[feign_client]`, or [`Builder::fallback`](crate::Builder::fallback) / [`Builder::fallback_factory`](crate::Builder::fallback_factory) | none |
//!
//! A call over the adaptive limit fails at once like a call that found the bulkhead full
//! ([`Error::is_bulkhead_full`](crate::Error::is_bulkhead_full)); the limit is taken after the
//! bulkhead's slot, so it measures the calls themselves, not their wait for a slot.
//!
//! A fallback answers a call that the breaker refused, that found the bulkhead full, or that
//! failed in a way the classifier counts as a failure; any other error reaches the caller.
//!
//! Metrics, through the `metrics` facade under Resilience4j's Micrometer names:
//! [`CIRCUIT_BREAKER_STATE`], [`CIRCUIT_BREAKER_CALLS`] and
//! [`BULKHEAD_AVAILABLE_CONCURRENT_CALLS`], and feign-rs's [`ADAPTIVE_CONCURRENCY_LIMIT`]. State transitions are also a stream:
//! [`CircuitBreakerConfig::subscribe`].

mod adaptive;
mod adaptive_config;
#[cfg(test)]
mod adaptive_tests;
mod breaker;
#[cfg(test)]
mod breaker_tests;
mod bulkhead;
mod classify;
mod config;
mod fallback;
mod metrics;
mod outcomes;
mod registry;
mod state;
mod window;
mod word;

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

pub use adaptive::ADAPTIVE_CONCURRENCY_LIMIT;
pub use adaptive_config::AdaptiveLimitConfig;
pub use classify::{
    classifier_fn, Classification, ClassifierFn, DefaultClassifier, FailureClassifier,
};
pub use config::{BreakerScope, BulkheadConfig, CircuitBreakerConfig};
pub use fallback::FallbackFactory;
pub use metrics::{
    BULKHEAD_AVAILABLE_CONCURRENT_CALLS, CIRCUIT_BREAKER_CALLS, CIRCUIT_BREAKER_STATE,
};
pub use state::{CircuitState, StateTransition};

pub(crate) use fallback::Fallback;

use adaptive::AdaptiveLimit;
use breaker::Outcome;
use bulkhead::Bulkhead;
use registry::Breakers;

use crate::meta::{ClientMeta, MethodMeta};
use crate::Error;

/// What the builder collects; checked and turned into [`Resilience`] by `build()`.
#[derive(Clone, Default)]
pub(crate) struct Settings {
    pub(crate) circuit_breaker: Option<CircuitBreakerConfig>,
    pub(crate) bulkhead: Option<BulkheadConfig>,
    pub(crate) adaptive: Option<AdaptiveLimitConfig>,
    pub(crate) classifier: Option<Arc<dyn FailureClassifier>>,
    pub(crate) fallback: Option<Arc<dyn Any + Send + Sync>>,
}

impl Settings {
    pub(crate) fn build(self, client: &'static ClientMeta) -> Result<Resilience, Error> {
        let breakers = match self.circuit_breaker {
            Some(config) => {
                config.validate()?;
                Some(Arc::new(Breakers::new(client.service, config)))
            }
            None => None,
        };
        let bulkhead = match self.bulkhead {
            Some(config) => {
                config.validate()?;
                Some(Arc::new(Bulkhead::new(client.service, config)))
            }
            None => None,
        };
        let adaptive = match self.adaptive {
            Some(config) => {
                config.validate()?;
                Some(Arc::new(AdaptiveLimit::new(client.service, config)))
            }
            None => None,
        };
        Ok(Resilience {
            breakers,
            bulkhead,
            adaptive,
            classifier: self
                .classifier
                .unwrap_or_else(|| Arc::new(DefaultClassifier)),
            fallback: self.fallback,
        })
    }
}

/// A built client's breakers, bulkhead, classifier and fallback. A clone shares their state: a
/// live client rebuilt on new properties keeps them when their settings did not change.
#[derive(Clone)]
pub(crate) struct Resilience {
    breakers: Option<Arc<Breakers>>,
    bulkhead: Option<Arc<Bulkhead>>,
    adaptive: Option<Arc<AdaptiveLimit>>,
    classifier: Arc<dyn FailureClassifier>,
    fallback: Option<Arc<dyn Any + Send + Sync>>,
}

impl Resilience {
    /// Whether calls need [`Resilience::guard`] at all.
    pub(crate) fn guards_calls(&self) -> bool {
        self.breakers.is_some() || self.bulkhead.is_some() || self.adaptive.is_some()
    }

    /// Runs the future `call` makes through the breaker of `meta`, the bulkhead and the
    /// adaptive limit, recording its outcome. The future is made here, once admitted: taken
    /// ready-made, it would take its room in this future twice (as the argument and as the
    /// future awaited).
    pub(crate) async fn guard<T, F>(
        &self,
        meta: &'static MethodMeta,
        call: impl FnOnce() -> F,
    ) -> Result<T, Error>
    where
        F: Future<Output = Result<T, Error>>,
    {
        let permit = match &self.breakers {
            Some(breakers) => Some(
                breakers
                    .acquire(meta)
                    .map_err(|e| e.with_method_key(meta.key))?,
            ),
            None => None,
        };
        // A full bulkhead drops the permit unrecorded: the service did not fail.
        let slot = match &self.bulkhead {
            Some(bulkhead) => Some(
                bulkhead
                    .enter()
                    .await
                    .map_err(|e| e.with_method_key(meta.key))?,
            ),
            None => None,
        };
        let ticket = match &self.adaptive {
            Some(adaptive) => Some(adaptive.enter().map_err(|e| e.with_method_key(meta.key))?),
            None => None,
        };
        let result = call().await;
        if let Some(ticket) = ticket {
            ticket.finish();
        }
        drop(slot);
        if let Some(permit) = permit {
            permit.record(match &result {
                Ok(_) => Outcome::Success,
                Err(error) => self.classifier.classify(error).into(),
            });
        }
        result
    }

    pub(crate) fn has_fallback(&self) -> bool {
        self.fallback.is_some()
    }

    /// The fallback for a call that ended in `error`, or the error back when there is none or
    /// the error does not call for one.
    pub(crate) fn fallback<T: ?Sized + Send + Sync + 'static>(
        &self,
        error: Error,
    ) -> Result<Arc<T>, Error> {
        let Some(fallback) = self
            .fallback
            .as_deref()
            .and_then(|any| any.downcast_ref::<Fallback<T>>())
        else {
            return Err(error);
        };
        let wanted = error.is_circuit_open()
            || error.is_bulkhead_full()
            || self.classifier.classify(&error) == Classification::Failure;
        if !wanted {
            return Err(error);
        }
        tracing::debug!(method = error.method_key().unwrap_or(""), error = %error, "calling the fallback");
        Ok(fallback.get(error))
    }
}
