//! Time as the balancer keeps it: nanoseconds since the balancer's epoch in plain integers, so
//! per-instance deadlines fit in atomics. feign-core's clock, which follows tokio's, so tests
//! can pause it.

pub(crate) use feign_core::clock::{nanos, Clock};
