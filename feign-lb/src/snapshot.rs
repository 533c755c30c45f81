//! The immutable, derived state of one service's instance list: rebuilt when the supplier's
//! version moves, swapped atomically, read by every pick without a lock.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::config::Policy;
use crate::filter::{Filters, CANARY_KEY, HINT_KEY, VERSION_KEY, WEIGHT_KEY};
use crate::listed::{self, Listed};
use crate::rng::{Draw, Rng};
use crate::state::{Roster, ServiceState};
use crate::stats::InstanceStats;
use crate::view::View;
use crate::{Instances, ServiceInstance};

/// Everything a pick needs, derived from one instance list.
pub(crate) struct Snapshot {
    /// The supplier version this was built from.
    pub(crate) version: u64,
    /// Whether the supplier knew the service at all.
    pub(crate) known: bool,
    pub(crate) stats: Box<[Listed]>,
    /// Instances that left the list with attempts in flight, kept so that those attempts
    /// still count as active; dropped at a later rebuild once they are done.
    pub(crate) retired: Box<[Listed]>,
    pub(crate) weights: Box<[u32]>,
    pub(crate) by_id: HashMap<Arc<str>, u32>,
    pub(crate) all: View,
    /// The preferred zone's instances and the others.
    pub(crate) zone: Option<(View, View)>,
    pub(crate) hints: HashMap<Box<str>, View>,
    pub(crate) versions: HashMap<Box<str>, View>,
    pub(crate) canary: Option<(View, View)>,
}

impl Snapshot {
    /// The state before the first fetch.
    pub(crate) fn empty() -> Snapshot {
        Snapshot {
            version: u64::MAX,
            known: false,
            stats: Box::new([]),
            retired: Box::new([]),
            weights: Box::new([]),
            by_id: HashMap::new(),
            all: View::new(Vec::new(), None, 0),
            zone: None,
            hints: HashMap::new(),
            versions: HashMap::new(),
            canary: None,
        }
    }

    /// Derives the state of `instances`, keeping the live stats of instances already listed in
    /// `previous`.
    pub(crate) fn build(
        version: u64,
        instances: Option<Instances>,
        previous: &Snapshot,
        state: &Arc<ServiceState>,
        policy: Policy,
        filters: &Filters,
        rng: &Rng,
    ) -> Snapshot {
        let known = instances.is_some();
        let instances = instances.unwrap_or_else(|| Arc::from(Vec::new()));
        let now = state.clock.now();
        // Instances joining an existing list ramp up; the very first list starts at full share.
        let ramp_from = if previous.known && !previous.stats.is_empty() {
            now
        } else {
            0
        };

        let mut by_id: HashMap<Arc<str>, u32> = HashMap::with_capacity(instances.len());
        let mut stats = Vec::with_capacity(instances.len());
        let mut weights = Vec::with_capacity(instances.len());
        for instance in instances.iter() {
            if by_id.contains_key(instance.instance_id()) {
                tracing::warn!(instance = %instance.instance_id(), "duplicate instance id ignored");
                continue;
            }
            let listed = previous
                .by_id
                .get(instance.instance_id())
                .map(|&i| &previous.stats[i as usize]);
            let reused = listed::reuse(listed, instance);
            let stat = reused.unwrap_or_else(|| {
                if ramp_from != 0 {
                    state.note_ramp(ramp_from);
                }
                Listed::new(Arc::new(InstanceStats::new(
                    instance.clone(),
                    state.clone(),
                    state.default_rtt_ns,
                    ramp_from,
                )))
            });
            by_id.insert(instance.instance_id_arc().clone(), stats.len() as u32);
            weights.push(weight_of(instance));
            stats.push(stat);
        }
        let weighted = (policy == Policy::Weighted).then_some(weights.as_slice());
        let view = |members: Vec<u32>| View::new(members, weighted, rng.next_u64());
        let all = view((0..stats.len() as u32).collect());

        let zone = filters.zone.as_ref().map(|z| {
            let inside = |i: &ServiceInstance| {
                i.zone()
                    .is_some_and(|zone| zone.eq_ignore_ascii_case(&z.zone))
            };
            (
                view(select(&stats, inside)),
                view(select(&stats, |i| !inside(i))),
            )
        });
        let mut hints = HashMap::new();
        if filters.hints.is_some() {
            for (value, members) in group_by(&stats, HINT_KEY) {
                hints.insert(value, view(members));
            }
        }
        let mut versions = HashMap::new();
        if filters.version.is_some() {
            for (value, members) in group_by(&stats, VERSION_KEY) {
                versions.insert(value, view(members));
            }
        }
        let canary = filters.canary.as_ref().map(|_| {
            (
                view(select(&stats, is_canary)),
                view(select(&stats, |i| !is_canary(i))),
            )
        });

        let kept = |s: &Listed| {
            by_id
                .get(s.instance.instance_id())
                .is_some_and(|&i| stats[i as usize].same(s))
        };
        let retired = listed::retire(previous.stats.iter().chain(previous.retired.iter()), kept);

        let now_ejected = stats.iter().filter(|s| s.recount_ejection(now)).count();
        state
            .ejected
            .store(now_ejected, std::sync::atomic::Ordering::Relaxed);

        Snapshot {
            version,
            known,
            stats: stats.into_boxed_slice(),
            retired: retired.into_boxed_slice(),
            weights: weights.into_boxed_slice(),
            by_id,
            all,
            zone,
            hints,
            versions,
            canary,
        }
    }

    pub(crate) fn instance(&self, index: usize) -> &ServiceInstance {
        &self.stats[index].instance
    }
}

impl Roster for ArcSwap<Snapshot> {
    fn ejections(&self, now: u64) -> (usize, usize) {
        let snapshot = self.load();
        let ejected = snapshot
            .stats
            .iter()
            .filter(|s| s.ejection_pending(now))
            .count();
        (snapshot.stats.len(), ejected)
    }
}

/// An instance's weight from metadata `weight`; missing, unparsable or non-positive reads as 1.
pub(crate) fn weight_of(instance: &ServiceInstance) -> u32 {
    instance
        .metadata()
        .get(WEIGHT_KEY)
        .and_then(|w| w.trim().parse::<u32>().ok())
        .filter(|&w| w > 0)
        .unwrap_or(1)
}

/// Whether metadata says `canary=true`.
pub(crate) fn is_canary(instance: &ServiceInstance) -> bool {
    instance
        .metadata()
        .get(CANARY_KEY)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

fn select(stats: &[Listed], keep: impl Fn(&ServiceInstance) -> bool) -> Vec<u32> {
    (0..stats.len() as u32)
        .filter(|&i| keep(&stats[i as usize].instance))
        .collect()
}

fn group_by(stats: &[Listed], key: &str) -> HashMap<Box<str>, Vec<u32>> {
    let mut groups: HashMap<Box<str>, Vec<u32>> = HashMap::new();
    for (i, s) in stats.iter().enumerate() {
        if let Some(value) = s.instance.metadata().get(key) {
            groups
                .entry(value.as_str().into())
                .or_default()
                .push(i as u32);
        }
    }
    groups
}
