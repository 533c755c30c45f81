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

/// The snapshot a new one is derived from.
#[derive(Clone, Copy)]
pub(crate) enum Before<'a> {
    /// The service's own snapshot: listed endpoints keep their stats, shared.
    Own(&'a Snapshot),
    /// The snapshot of the same service in the balancer a reload replaces: its endpoints'
    /// state (ejection, latency estimate, slow-start ramp) is copied into the new service's
    /// stats, which report to the new settings.
    Replaced(&'a Snapshot),
}

/// Everything a pick needs, derived from one instance list.
pub(crate) struct Snapshot {
    /// The supplier version this was built from.
    pub(crate) version: u64,
    /// Whether the supplier knew the service at all.
    pub(crate) known: bool,
    pub(crate) stats: Box<[Listed]>,
    /// The instances as this list describes them, by the same index as `stats`.
    pub(crate) instances: Box<[ServiceInstance]>,
    /// Instances that left the list with attempts in flight, kept so that those attempts
    /// still count as active; dropped at a later rebuild once they are done.
    pub(crate) retired: Box<[Listed]>,
    /// Each instance's weight (metadata `weight`, 1 when missing or unreadable).
    pub(crate) weights: Box<[f64]>,
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
            instances: Box::new([]),
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

    /// Derives the state of `instances`, keeping the live stats of the endpoints already listed
    /// in `previous` (an instance id at the same address), whatever else of them changed.
    ///
    /// The instances are put in the order of their ids, whatever order the supplier gives
    /// (Eureka's client shuffles an application whose list changed), and every view carries
    /// on the rotation of its counterpart in `previous` from the instance it would have picked
    /// next: round robin over a changing list stays a rotation, each instance once a round.
    pub(crate) fn build(
        version: u64,
        instances: Option<Instances>,
        before: Before<'_>,
        state: &Arc<ServiceState>,
        policy: Policy,
        filters: &Filters,
        rng: &Rng,
    ) -> Snapshot {
        let (Before::Own(previous) | Before::Replaced(previous)) = before;
        let replacing = matches!(before, Before::Replaced(_));
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
        let mut described = Vec::with_capacity(instances.len());
        let mut weights = Vec::with_capacity(instances.len());
        let mut ordered: Vec<&ServiceInstance> = instances.iter().collect();
        // Stable: of two instances with one id, the first listed is kept, as before.
        ordered.sort_by(|a, b| a.instance_id().cmp(b.instance_id()));
        for instance in ordered {
            if by_id.contains_key(instance.instance_id()) {
                tracing::warn!(instance = %instance.instance_id(), "duplicate instance id ignored");
                continue;
            }
            let listed_before = previous
                .by_id
                .get(instance.instance_id())
                .map(|&i| i as usize);
            let same_endpoint = listed_before
                .map(|i| &previous.stats[i])
                .filter(|s| s.is_endpoint_of(instance));
            let stat = match same_endpoint {
                Some(kept) if !replacing => {
                    kept.describe(instance);
                    kept.clone()
                }
                _ => {
                    let fresh = InstanceStats::new(
                        instance.clone(),
                        state.clone(),
                        state.default_rtt_ns,
                        ramp_from,
                    );
                    match same_endpoint {
                        Some(replaced) => fresh.take_state_of(replaced, now),
                        None if ramp_from != 0 => state.note_ramp(ramp_from),
                        None => {}
                    }
                    Listed::new(Arc::new(fresh))
                }
            };
            by_id.insert(instance.instance_id_arc().clone(), stats.len() as u32);
            let described_before = listed_before.map(|i| previous.instance(i));
            weights.push(weight_or_logged(&state.name, instance, described_before));
            described.push(instance.clone());
            stats.push(stat);
        }
        let weighted = (policy == Policy::Weighted).then_some(weights.as_slice());
        let view = |members: Vec<u32>, before: Option<&View>| {
            let Some(next) = before.and_then(View::next_up) else {
                return View::new(members, weighted, rng.next_u64());
            };
            // The position of the instance `previous` would have picked next, or of the first
            // after it in id order (wrapping) if it left.
            let position = |members: &[u32], old: u32| {
                let id = previous.instance(old as usize).instance_id();
                members
                    .iter()
                    .position(|&m| described[m as usize].instance_id() >= id)
                    .unwrap_or(0)
            };
            let (member, generation) = next.weighted;
            let round_robin = position(&members, next.round_robin);
            let weighted_at = (position(&members, member), generation);
            View::resumed(members, weighted, round_robin, weighted_at)
        };
        let all = view((0..stats.len() as u32).collect(), Some(&previous.all));

        let zone = filters.zone.as_ref().map(|z| {
            let inside = |i: &ServiceInstance| {
                i.zone()
                    .is_some_and(|zone| zone.eq_ignore_ascii_case(&z.zone))
            };
            let before = previous.zone.as_ref();
            (
                view(select(&described, inside), before.map(|(v, _)| v)),
                view(select(&described, |i| !inside(i)), before.map(|(_, v)| v)),
            )
        });
        let mut hints = HashMap::new();
        if filters.hints.is_some() {
            for (value, members) in group_by(&described, HINT_KEY) {
                let before = previous.hints.get(&value);
                hints.insert(value, view(members, before));
            }
        }
        let mut versions = HashMap::new();
        if filters.version.is_some() {
            for (value, members) in group_by(&described, VERSION_KEY) {
                let before = previous.versions.get(&value);
                versions.insert(value, view(members, before));
            }
        }
        let canary = filters.canary.as_ref().map(|_| {
            let before = previous.canary.as_ref();
            (
                view(select(&described, is_canary), before.map(|(v, _)| v)),
                view(
                    select(&described, |i| !is_canary(i)),
                    before.map(|(_, v)| v),
                ),
            )
        });

        let kept = |s: &Listed| {
            by_id
                .get(s.id())
                .is_some_and(|&i| stats[i as usize].same(s))
        };
        // The attempts in flight on a replaced balancer report to it, not to this one.
        let retired = if replacing {
            Vec::new()
        } else {
            listed::retire(previous.stats.iter().chain(previous.retired.iter()), kept)
        };

        let now_ejected = stats.iter().filter(|s| s.recount_ejection(now)).count();
        state
            .ejected
            .store(now_ejected, std::sync::atomic::Ordering::Relaxed);

        Snapshot {
            version,
            known,
            stats: stats.into_boxed_slice(),
            instances: described.into_boxed_slice(),
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

    /// Instance `index` as this list describes it.
    pub(crate) fn instance(&self, index: usize) -> &ServiceInstance {
        &self.instances[index]
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

/// An instance's weight as written in metadata `weight`: any number of at least 0, fractions
/// included (0: no traffic under [`Policy::Weighted`]); 1 when there is none. `Err` with the
/// text when it is not such a number.
fn weight_of(instance: &ServiceInstance) -> Result<f64, &str> {
    let Some(text) = instance.metadata().get(WEIGHT_KEY) else {
        return Ok(1.0);
    };
    match text.trim().parse::<f64>() {
        Ok(weight) if weight.is_finite() && weight >= 0.0 => Ok(weight),
        _ => Err(text),
    }
}

/// The weight [`weight_of`] reads, or 1 for one it cannot read: logged then, naming the
/// instance, unless `before` (the instance as the previous list described it) had the same
/// text, so that a weight is reported once and not at every rebuild.
fn weight_or_logged(
    service: &str,
    instance: &ServiceInstance,
    before: Option<&ServiceInstance>,
) -> f64 {
    weight_of(instance).unwrap_or_else(|text| {
        let written_before = before.and_then(|b| b.metadata().get(WEIGHT_KEY));
        if written_before.map(String::as_str) != Some(text) {
            let shown: String = text.chars().take(64).collect();
            tracing::warn!(
                service,
                instance = %instance.instance_id(),
                weight = ?shown,
                "instance weight is not a number of at least 0; it weighs 1"
            );
        }
        1.0
    })
}

/// Whether metadata says `canary=true`.
pub(crate) fn is_canary(instance: &ServiceInstance) -> bool {
    instance
        .metadata()
        .get(CANARY_KEY)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

fn select(instances: &[ServiceInstance], keep: impl Fn(&ServiceInstance) -> bool) -> Vec<u32> {
    (0..instances.len() as u32)
        .filter(|&i| keep(&instances[i as usize]))
        .collect()
}

fn group_by(instances: &[ServiceInstance], key: &str) -> HashMap<Box<str>, Vec<u32>> {
    let mut groups: HashMap<Box<str>, Vec<u32>> = HashMap::new();
    for (i, instance) in instances.iter().enumerate() {
        if let Some(value) = instance.metadata().get(key) {
            groups
                .entry(value.as_str().into())
                .or_default()
                .push(i as u32);
        }
    }
    groups
}
