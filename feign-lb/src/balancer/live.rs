//! [`LiveLoadBalancer`]: a balancer that follows a [`LiveConfig`] (feature `config`).

use std::fmt;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use feign_config::{Config, LiveConfig};
use feign_core::resolve::CallInfo;
use feign_core::resolve::{ChooseRequest, Chosen, Resolver};
use feign_core::retry::RetryPolicy;
use feign_core::retry::{RetryContext, RetryDecision};
use feign_core::Error;

use super::{Builder, LoadBalancer};

/// The sections a balancer binds: while they read the same, it is kept as it is.
const SECTIONS: [&str; 2] = ["spring.cloud.loadbalancer", "feign.loadbalancer"];

/// A [`LoadBalancer`] that follows a [`LiveConfig`]: when the properties under
/// `spring.cloud.loadbalancer` or `feign.loadbalancer` change, a new balancer is built from
/// the same [`Builder`] with the new properties and swapped in whole; picks that start after
/// the swap use it (the policy, retries, zone, hints, sticky sessions, caches and health
/// checks), and attempts in flight finish on the one that chose them. The new balancer keeps
/// what the settings did not change: each instance's ejection, latency estimate and
/// slow-start ramp carry over to it (as far as its settings use them: no ejection once
/// ejection is off, no estimate but under Peak-EWMA), and round robin goes on from where it
/// was. A change elsewhere in the properties leaves it as it is.
///
/// Properties it cannot bind change nothing: the error, naming the key and its file, is
/// logged at `ERROR` by `tracing`, and the balancer in force stays until the next reload.
///
/// Hand it to a client builder as any balancer: `.load_balancer(live_lb.clone())`. Its retry
/// policy asks the balancer in force at each decision. Cheap to clone; clones share it.
#[derive(Clone)]
pub struct LiveLoadBalancer {
    current: Arc<ArcSwap<LoadBalancer>>,
}

impl Builder {
    /// Builds a [`LiveLoadBalancer`]: this builder with `live`'s properties applied as
    /// [`config`](Builder::config) applies them (over every setting, whatever the order), and
    /// again on every change of `live`. Returns the errors `config` does for the properties in
    /// force now.
    ///
    /// Called inside a tokio runtime, the balancers built on later changes start their
    /// background work (supplier listeners, health checks, cache refreshes) on it.
    pub fn build_live(self, live: &LiveConfig) -> Result<LiveLoadBalancer, Error> {
        let config = live.current();
        let base = self.clone();
        let current = Arc::new(ArcSwap::from_pointee(self.config(&config)?.build()));
        let follower = Follower {
            base,
            current: Arc::downgrade(&current),
            applied: Mutex::new(config),
            runtime: tokio::runtime::Handle::try_current().ok(),
        };
        live.on_change(move |config| follower.follow(config));
        Ok(LiveLoadBalancer { current })
    }
}

impl LiveLoadBalancer {
    /// The balancer in force now.
    pub fn current(&self) -> LoadBalancer {
        (**self.current.load()).clone()
    }
}

/// What the listener holds.
struct Follower {
    base: Builder,
    current: std::sync::Weak<ArcSwap<LoadBalancer>>,
    applied: Mutex<Arc<Config>>,
    runtime: Option<tokio::runtime::Handle>,
}

impl Follower {
    fn follow(&self, config: &Arc<Config>) -> ControlFlow<()> {
        let Some(current) = self.current.upgrade() else {
            return ControlFlow::Break(());
        };
        let mut applied = self.applied.lock().unwrap_or_else(PoisonError::into_inner);
        if SECTIONS.iter().all(|s| applied.same_section(config, s)) {
            return ControlFlow::Continue(());
        }
        let _entered = self.runtime.as_ref().map(tokio::runtime::Handle::enter);
        match self.base.clone().config(config) {
            Ok(builder) => {
                let next = builder.build_replacing(Some(&current.load()));
                current.store(Arc::new(next));
                *applied = config.clone();
                tracing::info!("load balancer settings refreshed");
            }
            Err(error) => tracing::error!(
                "new load balancer properties not applied, the balancer keeps its settings: {error}"
            ),
        }
        ControlFlow::Continue(())
    }
}

impl Resolver for LiveLoadBalancer {
    fn choose(&self, request: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        self.current.load().choose(request)
    }

    fn retry_policy(&self, service: &str) -> Option<Arc<dyn RetryPolicy>> {
        Some(Arc::new(LiveRetry {
            current: self.current.clone(),
            service: service.into(),
        }))
    }
}

/// The retry policy of a service on whichever balancer is in force.
struct LiveRetry {
    current: Arc<ArcSwap<LoadBalancer>>,
    service: Box<str>,
}

impl LiveRetry {
    fn policy(&self) -> Option<Arc<dyn RetryPolicy>> {
        self.current.load().retry_policy(&self.service)
    }
}

impl RetryPolicy for LiveRetry {
    fn on_call(&self) {
        if let Some(policy) = self.policy() {
            policy.on_call();
        }
    }

    fn decide(&self, ctx: &RetryContext<'_>) -> RetryDecision {
        match self.policy() {
            Some(policy) => policy.decide(ctx),
            None => RetryDecision::Stop,
        }
    }

    fn allow_hedge(&self, call: &CallInfo<'_>) -> bool {
        self.policy().is_none_or(|policy| policy.allow_hedge(call))
    }
}

impl fmt::Debug for LiveLoadBalancer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LiveLoadBalancer")
            .field(&*self.current.load())
            .finish()
    }
}
