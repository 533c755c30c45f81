//! `EurekaSupplier`: the registry as a feign-lb `InstanceSupplier`.

use std::fmt;
use std::sync::Arc;

use feign_lb::{InstanceSupplier, Instances};
use futures_util::future::BoxFuture;

use super::shared::Shared;

/// The instances Eureka knows, for feign-lb: only routable `UP` instances with usable
/// addresses, looked up by application name or VIP address (any case).
///
/// Reads take no lock: the registry is an immutable snapshot swapped atomically after each
/// fetch. [`InstanceSupplier::changed`] resolves as soon as a fetch changes it, so a balancer
/// hears of changes at once. Cheap to clone; keeps serving the last registry after the client
/// is shut down.
#[derive(Clone)]
pub struct EurekaSupplier {
    shared: Arc<Shared>,
}

impl EurekaSupplier {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        EurekaSupplier { shared }
    }
}

impl fmt::Debug for EurekaSupplier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EurekaSupplier")
            .field("version", &self.shared.version())
            .finish()
    }
}

impl InstanceSupplier for EurekaSupplier {
    fn instances(&self, service_id: &str) -> Option<Instances> {
        self.shared.snapshot().lookup(service_id)
    }

    fn version(&self) -> u64 {
        self.shared.version()
    }

    fn changed(&self, seen: u64) -> BoxFuture<'static, ()> {
        self.shared.changed(seen)
    }
}
