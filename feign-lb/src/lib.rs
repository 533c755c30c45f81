//! feign-lb: discovery-backed client-side load balancing for feign-rs.

mod instance;
mod supplier;

pub use instance::ServiceInstance;
pub use supplier::{InstanceSupplier, Instances};
