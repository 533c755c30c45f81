//! Spring Boot-style configuration for feign-rs: `application.yml`, `application.properties`
//! and the environment, read with Spring's relaxed names, so a team can carry its settings over.
//!
//! This crate is the property source; each crate binds the properties of its own builder:
//!
//! | prefix | bound by |
//! |---|---|
//! | `spring.cloud.openfeign.client.*`, `feign.client.*` | `feign_core::Builder::config` |
//! | `spring.cloud.openfeign.*` and `feign.*` besides (compression, HTTP client, circuit breaker switches), `resilience4j.*` (circuit breaker, bulkhead, time limiter) | `feign_core::Builder::config` |
//! | `spring.cloud.loadbalancer.*`, `feign.loadbalancer.*` | `feign_lb::Builder::config` |
//! | `eureka.*`, `spring.application.name`, `server.port` | `feign_eureka::EurekaClientBuilder::config` (and `feign_eureka::SpringConfig`) |
//!
//! What it does, as Spring Boot does:
//!
//! - **Sources in order**: [`Config::load`] reads `application.yml`, `application.yaml` and
//!   `application.properties` from the working directory, then the environment; a later source
//!   overrides an earlier one. [`Config::with_file`], [`Config::with_env_vars`] and
//!   [`Config::set`] add layers by hand.
//! - **Relaxed names**: `read-timeout`, `readTimeout`, `read_timeout` and the environment
//!   variable segment `READTIMEOUT` are one property ([`relaxed`]). Environment variables map
//!   as `SPRING_CLOUD_LOADBALANCER_ZONE` → `spring.cloud.loadbalancer.zone`.
//! - **Placeholders**: `${key}` and `${key:default}` are resolved against every source; one
//!   without a value and without a default is an error.
//! - **Types**: durations (`5000` in the property's unit, `5s`, `250ms`, `PT5S`), booleans
//!   (`true`/`false`, `on`/`off`, `yes`/`no`), lists (YAML sequences, `key[0]` lines, or
//!   `a,b`), maps (`key.<name>`).
//! - **Errors name the key and the file**: every [`ConfigError`] about a property says which
//!   property and which file (or `environment variable NAME`) it came from.
//! - **Every key is known**: each binder describes the keys under its prefixes as a
//!   [`Namespace`] and checks them before binding. A key is bound; or a Spring key accepted and
//!   ignored with a warning naming it ([`Key::ignored`], logged once per `Config`); or refused
//!   with a reason ([`Key::refused`]); any other is an error at start naming the nearest known
//!   key, so a misspelt key is never a silent default:
//!   `` `spring.cloud.openfeign.compresion.request.enabled` in application.yml: unknown property, did you mean `spring.cloud.openfeign.compression.request.enabled`? ``
//! - **Documents and profiles**: a file may hold several documents (`---` in YAML, `#---` in
//!   properties), later ones winning; one with `spring.config.activate.on-profile` counts only
//!   while its profile expression holds for `spring.profiles.active` (see [`Config`]).
//! - **Live properties**: [`LiveConfig`] reads the same sources again on
//!   [`reload`](LiveConfig::reload) or while it [`watch`](LiveConfig::watch)es them, swaps
//!   the new [`Config`] in whole, and tells its listeners; a file that does not parse keeps
//!   the previous properties and logs an error naming it.
//!
//! ```
//! use std::time::Duration;
//! use feign_config::{Config, DurationUnit};
//!
//! let yaml = "spring:\n  cloud:\n    openfeign:\n      client:\n        config:\n          default:\n            readTimeout: ${TIMEOUT:5s}\n";
//! let config = Config::from_yaml_str(yaml, "application.yml")?
//!     .with_env_vars([("SPRING_CLOUD_OPENFEIGN_CLIENT_CONFIG_DEFAULT_CONNECTTIMEOUT", "250")]);
//! let section = config.section("spring.cloud.openfeign.client.config.default")?;
//! let read = section.iter().find(|p| p.rest() == "readtimeout").unwrap();
//! assert_eq!(read.as_duration(DurationUnit::Millis)?, Duration::from_secs(5));
//! let connect = config.get("spring.cloud.openfeign.client.config.default.connect-timeout")?.unwrap();
//! assert_eq!(connect.as_duration(DurationUnit::Millis)?, Duration::from_millis(250));
//!
//! let err = Config::from_yaml_str("a:\n  timeout: soon\n", "application.yml")?
//!     .get("a.timeout")?
//!     .unwrap()
//!     .as_duration(DurationUnit::Millis)
//!     .unwrap_err();
//! assert!(err.to_string().starts_with("`a.timeout` in application.yml: expected a duration"));
//! # Ok::<(), feign_config::ConfigError>(())
//! ```

mod config;
mod duration;
mod error;
mod key;
mod keys;
mod live;
mod nearest;
mod profiles;
mod property;
mod source;
mod warned;

pub use config::Config;
pub use duration::DurationUnit;
pub use error::ConfigError;
pub use key::relaxed;
pub use keys::{Key, Namespace, Namespaces};
pub use live::{LiveConfig, Watcher};
pub use property::Property;
