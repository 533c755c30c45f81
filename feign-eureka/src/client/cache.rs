//! `RegistryCache`: the client's local registry copy on its own, fed with Eureka documents.

use std::fmt;
use std::sync::Arc;

use feign_lb::Instances;

use crate::model::{Applications, ListedDocument};

use super::registry::Snapshot;
use super::routing::RoutingPolicy;
use super::shared::Shared;
use super::EurekaSupplier;

/// A local registry copy fed by hand with Eureka documents, with the client's routing rules
/// (routable `UP` instances with usable addresses). [`EurekaClient`](crate::EurekaClient) keeps
/// one of these current by itself; use this type to feed a supplier from a file, a test, or a
/// transport of your own.
///
/// ```
/// use feign_eureka::RegistryCache;
/// use feign_lb::InstanceSupplier;
///
/// let cache = RegistryCache::new();
/// cache.replace_from_json(br#"{"applications":{"versions__delta":"1","apps__hashcode":"UP_1_",
///   "application":[{"name":"ORDERS","instance":[{"instanceId":"o1","hostName":"10.0.0.5",
///   "app":"ORDERS","ipAddr":"10.0.0.5","status":"UP","port":{"$":8080,"@enabled":"true"}}]}]}}"#)?;
/// let supplier = cache.supplier();
/// assert_eq!(supplier.instances("orders").unwrap()[0].base_url().as_ref(), "http://10.0.0.5:8080");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub struct RegistryCache {
    shared: Arc<Shared>,
}

impl RegistryCache {
    /// An empty cache with the default routing rules.
    pub fn new() -> Self {
        RegistryCache {
            shared: Shared::new(RoutingPolicy::default()),
        }
    }

    /// Replaces the registry with a full listing.
    pub fn replace(&self, applications: Applications) {
        let current = self.shared.snapshot();
        let (snapshot, _) = Snapshot::from_full(applications, &current, &self.shared.policy);
        self.shared.publish(snapshot);
    }

    /// Replaces the registry with a full listing read from `{"applications":{...}}`. On error
    /// the previous registry stays.
    pub fn replace_from_json(&self, json: &[u8]) -> Result<(), serde_json::Error> {
        let document = ListedDocument::read(json)?;
        let current = self.shared.snapshot();
        let (snapshot, _) = Snapshot::from_listing(document, &current, &self.shared.policy);
        self.shared.publish(snapshot);
        Ok(())
    }

    /// Applies a delta; returns whether the resulting registry's hash matches the delta's
    /// `apps__hashcode` (when it does not, a client fetches the full registry).
    pub fn apply_delta(&self, delta: Applications) -> bool {
        let server_hash = delta.apps_hashcode.clone();
        let (snapshot, _) = self
            .shared
            .snapshot()
            .apply_delta(delta, &self.shared.policy);
        let matched = snapshot.hash_code() == server_hash;
        self.shared.publish(snapshot);
        matched
    }

    /// Applies a delta read from `{"applications":{...}}` (see [`RegistryCache::apply_delta`]).
    pub fn apply_delta_json(&self, json: &[u8]) -> Result<bool, serde_json::Error> {
        Ok(self.apply_delta(Applications::from_json(json)?))
    }

    /// The routable instances of `service` (application name or VIP, any case).
    pub fn instances(&self, service: &str) -> Option<Instances> {
        self.shared.snapshot().lookup(service)
    }

    /// The number of instances held, every status included.
    pub fn instance_count(&self) -> usize {
        self.shared.snapshot().instance_count()
    }

    /// The reconcile hash of the registry held.
    pub fn hash_code(&self) -> String {
        self.shared.snapshot().hash_code()
    }

    /// A feign-lb supplier reading this cache.
    pub fn supplier(&self) -> EurekaSupplier {
        EurekaSupplier::new(self.shared.clone())
    }
}

impl Default for RegistryCache {
    fn default() -> Self {
        RegistryCache::new()
    }
}

impl fmt::Debug for RegistryCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryCache")
            .field("instances", &self.instance_count())
            .finish()
    }
}
