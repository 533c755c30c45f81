//! Instance suppliers that compose as filters, as in Spring Cloud LoadBalancer's chain: a
//! static list, a cache over a slower source, active health checks.

mod caching;
mod health;
mod static_list;
mod subset;
mod versioned;

pub use caching::CachingSupplier;
pub use health::{HealthCheckOptions, HealthCheckSupplier};
pub use static_list::{InvalidUrl, StaticSupplier};
pub use subset::{Subset, SubsetSupplier};
pub use versioned::Versioned;
