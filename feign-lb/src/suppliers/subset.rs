//! Deterministic subsetting (Spring Cloud LoadBalancer 4.1's `subset`): each client talks to a
//! stable subset of a large service, chosen by its own instance id.
//!
//! Spring shuffles the list with a seed from the client's id and takes one slice of it (the SRE
//! book's algorithm, which balances perfectly when client ids are consecutive integers). With
//! ids hashed from names, as there, each client's slice is uniformly random, so the load per
//! instance is binomial either way; but a shuffle of the whole list moves most clients to other
//! instances whenever one instance comes or goes. This uses rendezvous hashing instead: every
//! instance gets a weight from the client's id and its own, and a client keeps the `size`
//! heaviest. The load per instance is the same binomial (each client's subset is uniformly
//! random), and a change of the list moves the fewest clients possible: an instance that leaves
//! changes only the subsets that held it, each by that one instance, and a new one enters only the
//! subsets it outweighs, each by one.

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::{InstanceSupplier, Instances, ServiceInstance};

/// Spring's default subset size.
const DEFAULT_SIZE: usize = 100;

/// Which instances of a service a client keeps: those its id weighs heaviest, `size` of them.
///
/// ```
/// use feign_lb::{ServiceInstance, Subset};
///
/// let instances: Vec<ServiceInstance> = (0..300)
///     .map(|i| ServiceInstance::new("orders", format!("10.0.{}.{}", i / 250, i % 250), 8080))
///     .collect();
/// let subset = Subset::new("billing-7f9c").size(10);
/// let mine = subset.select(&instances);
/// assert_eq!(mine.len(), 10);
/// assert_eq!(subset.select(&instances), mine, "the same id, the same subset");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Subset {
    instance_id: Arc<str>,
    seed: u64,
    size: usize,
}

impl fmt::Debug for Subset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subset")
            .field("instance_id", &self.instance_id)
            .field("size", &self.size)
            .finish()
    }
}

impl Subset {
    /// The subset of the client `instance_id` (Spring's `subset.instance-id`): the same id gets
    /// the same subset in every process, so give each client instance its own (a pod name, a
    /// host and port) or clients sharing an id share their subset. Size 100 (Spring's default).
    pub fn new(instance_id: impl Into<Arc<str>>) -> Self {
        let instance_id = instance_id.into();
        Subset {
            seed: mix(fnv1a(instance_id.as_bytes())),
            instance_id,
            size: DEFAULT_SIZE,
        }
    }

    /// How many instances a client keeps (Spring's `subset.size`, default 100; at least 1). A
    /// service with no more instances than this is used whole.
    pub fn size(mut self, size: usize) -> Self {
        self.size = size.max(1);
        self
    }

    /// The client id this subset is chosen by.
    pub fn instance_id(&self) -> &str {
        &self.instance_id
    }

    /// The subset of `instances`, in their order: all of them when there are no more than
    /// [`size`](Subset::size), else the `size` this client's id weighs heaviest.
    pub fn select(&self, instances: &[ServiceInstance]) -> Vec<ServiceInstance> {
        if instances.len() <= self.size {
            return instances.to_vec();
        }
        let mut weighed: Vec<(u64, usize)> = instances
            .iter()
            .enumerate()
            .map(|(index, instance)| (self.weight(instance), index))
            .collect();
        // Heaviest first; equal weights (distinct ids almost never) by position.
        weighed.select_nth_unstable_by(self.size - 1, |a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut kept: Vec<usize> = weighed[..self.size].iter().map(|&(_, i)| i).collect();
        kept.sort_unstable();
        kept.into_iter().map(|i| instances[i].clone()).collect()
    }

    /// The rendezvous weight of `instance` for this client: a strong mix of both ids' hashes, so
    /// that each client ranks the instances in an independent, uniformly random order.
    fn weight(&self, instance: &ServiceInstance) -> u64 {
        mix(self.seed ^ mix(fnv1a(instance.instance_id().as_bytes())))
    }
}

/// FNV-1a over `bytes`: stable across processes and versions, unlike `std`'s hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// SplitMix64's finalizer: a bijection whose every output bit depends on every input bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A supplier that passes on only this client's [`Subset`] of each service's instances.
///
/// [`Builder::subset`](crate::Builder::subset) puts one around the balancer's suppliers; this
/// type is for suppliers shared with other code.
pub struct SubsetSupplier {
    inner: Arc<dyn InstanceSupplier>,
    subset: Subset,
}

impl fmt::Debug for SubsetSupplier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubsetSupplier")
            .field("subset", &self.subset)
            .finish_non_exhaustive()
    }
}

impl SubsetSupplier {
    /// `inner`'s instances, narrowed to `subset`.
    pub fn new(inner: impl InstanceSupplier, subset: Subset) -> Self {
        Self::shared(Arc::new(inner), subset)
    }

    /// Same as [`SubsetSupplier::new`], for a supplier shared with other code.
    pub fn shared(inner: Arc<dyn InstanceSupplier>, subset: Subset) -> Self {
        SubsetSupplier { inner, subset }
    }
}

impl InstanceSupplier for SubsetSupplier {
    fn instances(&self, service_id: &str) -> Option<Instances> {
        let all = self.inner.instances(service_id)?;
        if all.len() <= self.subset.size {
            return Some(all);
        }
        Some(Instances::from(self.subset.select(&all)))
    }

    fn version(&self) -> u64 {
        self.inner.version()
    }

    fn changed(&self, seen: u64) -> BoxFuture<'static, ()> {
        self.inner.changed(seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_stable_across_builds() {
        // FNV-1a's published test vector: a subset must not change with the toolchain.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Subset::new("x").size(0).size, 1);
    }
}
