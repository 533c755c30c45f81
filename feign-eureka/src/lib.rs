//! feign-eureka: a Eureka client, and (feature `server`) an embedded Eureka-compatible registry.
