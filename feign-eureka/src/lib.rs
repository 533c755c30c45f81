//! feign-eureka: a Netflix Eureka client for feign-rs services. The embedded Eureka-compatible
//! registry lives in the `feign-eureka-server` crate.
//!
//! The client registers a service, renews its lease, and keeps a local copy of the registry
//! that feeds feign-lb's load balancer through [`EurekaSupplier`]. It speaks the Eureka REST
//! protocol as Spring Cloud Netflix and Netflix servers do (JSON, the exact register body,
//! `lastDirtyTimestamp` rules, deltas with hash reconciliation), and it is tested against a real
//! Spring Cloud Eureka server.
//!
//! # Registration and discovery
//!
//! ```no_run
//! use feign_eureka::{EurekaClient, InstanceConfig};
//! use feign_lb::InstanceSupplier;
//!
//! # async fn run() -> Result<(), feign_eureka::Error> {
//! let eureka = EurekaClient::builder()
//!     .service_urls(["http://127.0.0.1:8761/eureka/"])
//!     .instance(InstanceConfig::new("order-service", 8080).metadata("zone", "zone-a"))
//!     .start()
//!     .await?; // fetches the registry; registers, heartbeats and refreshes in the background
//!
//! // Feed a load balancer (or read it directly): routable UP instances only.
//! let supplier = eureka.supplier();
//! if let Some(instances) = supplier.instances("payment-service") {
//!     println!("{} payment instances", instances.len());
//! }
//!
//! // At shutdown: deregister first (bounded), then stop the background tasks.
//! eureka.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! Leave out [`EurekaClientBuilder::instance`] to only discover; set
//! [`EurekaClientBuilder::fetch_registry`] to `false` to only register. With the `config`
//! feature, settings can come from Spring property names instead
//! ([`EurekaClientBuilder::config`] over a `feign_config::Config`, as feign-core's and
//! feign-lb's builders read theirs, or [`SpringConfig`] to load and build in one go):
//!
//! ```no_run
//! # #[cfg(feature = "config")]
//! # async fn run() -> Result<(), feign_eureka::Error> {
//! let eureka = feign_eureka::SpringConfig::from_file("application.yml")?
//!     .merge_env()
//!     .builder()?
//!     .start()
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Cargo features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `config` | yes | [`EurekaClientBuilder::config`] and [`SpringConfig`]: Spring's `eureka.*` properties (the [`config`] module's table) from `application.yml`, `application.properties` and the environment, through the feign-config crate |
//!
//! # Behaviour worth knowing
//!
//! * **Registration**: `POST apps/{APP}` with Eureka's exact JSON, a heartbeat every renewal
//!   interval (30 s), re-registration at once on a 404 heartbeat, status changes
//!   ([`EurekaClient::set_status`]) sent by re-registering with a newer `lastDirtyTimestamp`, an
//!   administrator's override respected, the first registration jittered (up to 2 s).
//! * **Discovery**: a full fetch at start and whenever the local copy is empty, then a delta
//!   every 30 s; a hash mismatch or a refused delta triggers one full fetch. The registry is an
//!   immutable snapshot swapped atomically, and [`feign_lb::InstanceSupplier::changed`] resolves
//!   as soon as it changes. Parsing is tolerant ([`model`]); one bad instance is skipped, a bad
//!   document keeps the last good registry, and a sudden loss of more than half of an
//!   application's instances is held back for one fetch.
//! * **Safety**: only `hostName` and the port are ever used to route; instances with unusable
//!   addresses (`0.0.0.0`, port 0, link-local such as `169.254.169.254`, host names with `/`,
//!   `@` or control bytes) are never routed to; URL fields such as `homePageUrl` are never
//!   fetched. Credentials in service URLs become basic auth and are never logged.
//! * **Failure**: up to three servers per call (own zone first, shuffled), sticky on success,
//!   re-picked every 10–30 min ([`EurekaClientBuilder::seed`] makes the choice reproducible);
//!   timeouts 5 s connect / 8 s read; failing heartbeats and fetches back off ×2 up to 10× the
//!   interval, with jitter, and each kind of failure is warned about at most once a minute.
//!   Eureka down at start: the client starts with an empty registry, or serves a
//!   [`BackupRegistry`] (a saved registry file and/or fixed instances) until a fetch succeeds;
//!   down later: the cached instances keep being served and [`EurekaClient::staleness`] says
//!   how old they are (also the `metrics` gauge `eureka.client.registry.staleness`, in
//!   seconds). Dropping the client stops its tasks without panicking;
//!   [`EurekaClient::shutdown`] is bounded even when Eureka hangs.
//! * **Cost**: a full fetch takes over the instances that did not change from the previous
//!   registry, so a periodic full fetch of a steady registry costs about its parse; a
//!   routable instance's metadata is held once.

mod client;
#[cfg(feature = "config")]
pub mod config;
pub mod model;

pub use client::{
    BackupRegistry, Error, EurekaClient, EurekaClientBuilder, EurekaSupplier, HealthCheck,
    InstanceConfig, RegistryCache,
};
#[cfg(feature = "config")]
pub use config::SpringConfig;
