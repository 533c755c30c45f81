//! feign-eureka: a Eureka client, and (feature `server`) an embedded Eureka-compatible registry.

mod client;
pub mod config;
pub mod model;

#[cfg(feature = "server")]
pub mod server;

pub use client::{EurekaClient, EurekaClientBuilder, EurekaSupplier, Error, InstanceConfig, RegistryCache};
pub use config::SpringConfig;
