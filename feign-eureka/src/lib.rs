//! feign-eureka: a Eureka client, and (feature `server`) an embedded Eureka-compatible registry.

pub mod model;

#[cfg(feature = "server")]
pub mod server;
