//! feign-lb: discovery-backed client-side load balancing for feign-rs.
//!
//! A client declared with only a service name, `#[feign_client("order-service")]`, asks a
//! [`feign_core::Resolver`] for an instance on every attempt. [`LoadBalancer`] is that
//! resolver: it reads instances from [`InstanceSupplier`]s (a static list, a cache, active
//! health checks, the Eureka discovery client), picks one with a [`Policy`], tracks every
//! instance's in-flight count, latency and failures in atomics, ejects failing instances,
//! and hands the client a Spring-compatible retry policy that retries on another instance
//! under a retry budget.
//!
//! ```no_run
//! use feign_lb::{LoadBalancer, Policy, StaticSupplier};
//!
//! let lb = LoadBalancer::builder()
//!     .supplier(StaticSupplier::new("order-service", ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]))
//!     .policy(Policy::PeakEwma)
//!     .build();
//! // let orders = OrderServiceClient::builder().load_balancer(lb).build()?;
//! # let _ = lb;
//! ```
//!
//! # What happens on a pick
//!
//! Each service's instance list is an immutable snapshot, rebuilt when the supplier's
//! [`InstanceSupplier::version`] moves (and as soon as [`InstanceSupplier::changed`] fires) and
//! swapped atomically: **readers never take a lock, and a pick allocates nothing**. Each thread
//! reads a service's snapshot through its own cache, revalidated with one load, and draws from
//! its own random source (seeded balancers stay deterministic on one thread). A pick hands the
//! client one shared pointer to the chosen instance, and that reference is the attempt's
//! in-flight count: it counts until the attempt is reported or dropped. The pick:
//!
//! 1. the instance of the previous attempt when the retry policy asked for the same instance,
//!    else the sticky-session cookie `sc-lb-instance-id` ([`StickySession`]) or the last
//!    instance ([`Builder::same_instance_preference`]) while listed and not ejected;
//! 2. routing filters, each falling back to what it was given when it matches nothing:
//!    [`ZonePreference`] (metadata `zone`, with failover when the whole zone failed),
//!    [`VersionRouting`] (metadata `version`), [`Hints`] (`X-SC-LB-Hint` against metadata
//!    `hint`), [`Canary`] (metadata `canary=true`);
//! 3. the policy over what is left, skipping every instance already tried in the call and
//!    every ejected one (unless more than half are ejected: panic mode balances across all);
//!    new and returning instances ramp up over 30 s ([`SlowStart`]).
//!
//! With [`Builder::subset`] (off by default) the balancer sees only its client's [`Subset`] of
//! each service: deterministic subsetting, so that a client of a service of thousands of
//! instances talks to (and keeps connections to) a hundred of them.
//!
//! | policy | pick | state |
//! |---|---|---|
//! | [`Policy::RoundRobin`] (default) | next in turn, from a random start | one cursor per view |
//! | [`Policy::Random`] | uniform | none |
//! | [`Policy::Weighted`] | smooth stride schedule over metadata `weight` | one sequence per view |
//! | [`Policy::LeastRequest`] | best of two distinct random instances by in-flight count | atomics |
//! | [`Policy::PeakEwma`] | best of two by latency × (in-flight + 1), errors count as slow | atomics |
//!
//! # Failures
//!
//! Every attempt reports back through the [`feign_core::CallObserver`] the pick returned. A
//! connect failure ejects the instance at once; 5 consecutive 5xx or timeouts eject it for
//! 30 s, doubling up to 5 min; never more than max(1, 10 %) of the instances at a time
//! ([`Ejection`]). The retry policy ([`RetryConfig`]) follows Spring's settings: no retry on
//! the same instance, one on the next, idempotent methods only except when nothing was sent,
//! status codes 502/503/504, optional backoff, and a [`RetryBudget`] of 20 % of calls + 10/s.
//! Hedges (`feign_core::HedgingConfig`) have a [`HedgeBudget`] of their own: 5 % of calls +
//! 5/s over 1 s, and none while more than half of the calls are slow enough to ask for one.
//! When no instance can be chosen the error names the service and says whether none is
//! registered or all were filtered out.
//!
//! Lifecycle hooks ([`LifecycleHook`]) and [`Counters`] are named after Spring's
//! (`loadbalancer.requests.active|success|failed|discard`). The same four are published through
//! the `metrics` facade with Spring's tags: `active` (a gauge), `success` (with `outcome`) and
//! `failed` per instance (`serviceId`, `serviceInstance.instanceId`, `serviceInstance.host`,
//! `serviceInstance.port`, `serviceInstance.secure`), `discard` per `serviceId`. Install the
//! recorder before the balancer first sees an instance.
//!
//! # Configuration
//!
//! With the `config` feature (on by default), [`Builder::config`] reads Spring Cloud
//! LoadBalancer's properties from a `feign_config::Config` (`application.yml`,
//! `application.properties`, the environment): `spring.cloud.loadbalancer.*` for every service,
//! then `spring.cloud.loadbalancer.clients.<service>.*` for one, each key inheriting the top
//! level's; a service's own `configurations` replaces the top level's preset, as in Spring.
//! File values override what the builder was given before `config`; setters after it override
//! the file.
//!
//! | property | effect |
//! |---|---|
//! | `configurations` | Spring's presets: `default` (nothing more), `zone-preference` ([`ZonePreference`] on `zone`, which it needs), `health-check` ([`HealthCheckSupplier`] around the balancer's supplier, no cache), `request-based-sticky-session` ([`StickySession`]), `same-instance-preference`, `weighted` ([`Policy::Weighted`]), `subset` ([`Subset`] around the balancer's supplier) |
//! | `subset.instance-id` (default: a random id per process), `subset.size` (default 100, at least 1) | [`Subset`] |
//! | `zone` | the zone `zone-preference` keeps |
//! | `health-check.initial-delay`, `.interval` (ms, or `25s`), `.path.<service>` / `.path.default` (empty: no checks for that service; none: the URL the instance registered, else `/actuator/health`), `.port`, `.refetch-instances`, `.refetch-instances-interval` | [`HealthCheckOptions`]; checks connect with [`Builder::health_check_transport`] |
//! | `retry.enabled`, `.max-retries-on-same-service-instance`, `.max-retries-on-next-service-instance`, `.retryable-status-codes`, `.retry-on-all-operations`, `.avoid-previous-instance` (only `true`) | [`RetryConfig`] |
//! | `retry.backoff.enabled`, `.min-backoff`, `.max-backoff`, `.jitter` | [`Backoff`] |
//! | `cache.enabled`, `cache.ttl` | a [`CachingSupplier`] around the balancer's supplier when `ttl` is set (not with `health-check`): it keeps the last good list and passes the supplier's changes through at once, so the TTL bounds only a supplier that never reports one; `cache.capacity` is checked and has no effect (one list per service is kept) |
//! | `sticky-session.instance-id-cookie-name`, `.add-service-instance-cookie` (only `false`) | the sticky cookie |
//! | `hint.<service>` / `hint.default`, `hint-header-name` | [`Hints`], on when either is set |
//! | `feign.loadbalancer.policy`, `feign.loadbalancer.clients.<service>.policy` (ours: Spring picks policies by bean) | [`Policy`]: `round-robin`, `random`, `weighted`, `least-request`, `peak-ewma` |
//!
//! Health checks and caches wrap the supplier set on the builder (before or after `config`),
//! and a service's own supplier when its `clients.<service>` section sets them.
//!
//! Every key under these prefixes is checked first, against one table
//! (`src/balancer/properties/keys.rs`, the one list of the keys it accepts and ignores). A
//! Spring key the balancer accepts and ignores is logged once at `WARN` (target
//! `feign_config`), naming it and saying why; among them `enabled: false` (the balancer is on
//! wherever it is given to a client: leave it out where clients call fixed URLs),
//! `eager-load.clients`, `x-forwarded.enabled: true`, `health-check.repeat-health-check: false`
//! and `api-version.*` (set in code: [`ServiceConfig::version_routing`]); a boolean that
//! says what the balancer does anyway is silent. Any other key, and any value that does not
//! parse, is an error naming the key and its file; an unknown key's error names the nearest
//! known one (`did you mean …?`).
//!
//! # Cargo features
//!
//! | Feature | Default | What it does |
//! |---|---|---|
//! | `config` | on | [`Builder::config`], through the feign-config crate |
//! | `reqwest-middleware` | off | `LoadBalancedMiddleware`: the balancer as a `reqwest_middleware::Middleware` |
//!
//! # Any HTTP client
//!
//! [`LoadBalancedLayer`] (a `tower` layer) and `LoadBalancedMiddleware` put the balancer in
//! front of clients that know nothing of it, as Spring's `@LoadBalanced RestClient`: see
//! [`crate::http`].

mod balancer;
mod budget;
mod clock;
mod config;
mod context;
mod filter;
pub mod http;
mod instance;
mod lifecycle;
mod listed;
mod metrics;
mod narrowing;
mod pick;
mod policy;
mod retry;
mod rng;
mod service;
mod snapshot;
mod snapshot_cache;
mod state;
mod stats;
mod stride;
mod supplier;
mod suppliers;
mod sync;
mod table;
mod view;

#[cfg(feature = "reqwest-middleware")]
pub use crate::http::LoadBalancedMiddleware;
pub use crate::http::{LoadBalanced, LoadBalancedLayer};
#[cfg(feature = "config")]
pub use balancer::LiveLoadBalancer;
pub use balancer::{Builder, InstanceState, LoadBalancer, ServiceConfig};
pub use budget::{HedgeBudget, RetryBudget};
pub use config::{Ejection, PeakEwma, Policy, SlowStart};
pub use filter::{Canary, Hints, StickySession, VersionRouting, ZonePreference};
pub use filter::{CANARY_KEY, HINT_KEY, VERSION_KEY, WEIGHT_KEY, ZONE_KEY};
pub use instance::ServiceInstance;
pub use lifecycle::{Completion, CompletionStatus, Counters, LifecycleHook};
pub use retry::{Backoff, LbRetryPolicy, RetryConfig};
pub use supplier::{InstanceSupplier, Instances};
pub use suppliers::{
    CachingSupplier, HealthCheckOptions, HealthCheckSupplier, InvalidUrl, StaticSupplier, Subset,
    SubsetSupplier, Versioned,
};
