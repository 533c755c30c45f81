//! Instance suppliers: where a load balancer gets the instances of a service.
//!
//! CONTRACT (fixed): `InstanceSupplier` is implemented by feign-eureka's discovery client; it
//! may grow, must not change.

use std::sync::Arc;

use crate::ServiceInstance;

/// An immutable list of instances; readers share it without locks.
pub type Instances = Arc<[ServiceInstance]>;

/// A source of instances for one or many services: a static list, a cache, a registry client.
///
/// Reads are lock-free: implementations keep an immutable snapshot and swap it atomically when
/// it changes, bumping [`InstanceSupplier::version`] so balancers know to rebuild their state.
pub trait InstanceSupplier: Send + Sync + 'static {
    /// The instances of `service_id` now (only routable ones, e.g. UP in Eureka), or `None` when
    /// this supplier knows nothing of that service. Service ids compare case-insensitively.
    fn instances(&self, service_id: &str) -> Option<Instances>;

    /// A number that grows whenever any list this supplier serves changes. One atomic load.
    fn version(&self) -> u64;

    /// Resolves when [`InstanceSupplier::version`] may have moved past `seen`, so balancers hear
    /// of changes as they happen rather than on a timer. The default never resolves (for
    /// suppliers that do not change).
    fn changed(&self, seen: u64) -> futures_util::future::BoxFuture<'static, ()> {
        let _ = seen;
        Box::pin(std::future::pending())
    }
}
