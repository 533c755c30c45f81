//! Renders registry contents as Eureka JSON payloads with the crate's model types.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::cache::Payload;
use crate::lease::{AppTable, Lease};
use crate::record;
use feign_eureka::model::{
    reconcile_hash, ActionType, Application, Applications, InstanceInfo, InstanceStatus, LeaseInfo,
};

/// The stored instance with `leaseInfo` rebuilt from its lease (`decorateInstanceInfo`).
pub(crate) fn decorate(lease: &Lease) -> InstanceInfo {
    let mut info = InstanceInfo::clone(&lease.load());
    record::set_lease(
        &mut info,
        LeaseInfo {
            renewal_interval_in_secs: lease.renewal_interval_secs,
            duration_in_secs: lease.duration_secs,
            registration_timestamp: lease.registration_ms,
            last_renewal_timestamp: lease.last_update_ms(),
            eviction_timestamp: lease.eviction_ms(),
            service_up_timestamp: lease.service_up_ms(),
        },
    );
    info.is_coordinating_discovery_server = false;
    info
}

/// The most bytes `info` takes in a registry or delta document (JSON): its own JSON with the
/// lease the registry writes at its widest, its statuses at their longest, its timestamps at
/// twenty digits, and its share of an application's wrapper, as if it were alone in one. The
/// sum over the registry bounds the document a client fetches.
pub(crate) fn wire_bytes(info: &InstanceInfo) -> usize {
    const WIDEST: u64 = u64::MAX;
    let mut widest = info.clone();
    widest.status = InstanceStatus::OutOfService;
    widest.overridden_status = InstanceStatus::OutOfService;
    widest.action_type = Some(ActionType::Modified);
    widest.last_updated_timestamp = Some(WIDEST);
    widest.last_dirty_timestamp = Some(WIDEST);
    widest.is_coordinating_discovery_server = false;
    widest.lease_info = Some(LeaseInfo {
        renewal_interval_in_secs: u32::MAX,
        duration_in_secs: u32::MAX,
        registration_timestamp: WIDEST,
        last_renewal_timestamp: WIDEST,
        eviction_timestamp: WIDEST,
        service_up_timestamp: WIDEST,
    });
    // `{"name":"APP","instance":[...]},` around it.
    const WRAPPER: usize = r#"{"name":"","instance":[]},"#.len();
    widest.to_json().len() + info.app.len() + WRAPPER
}

fn payload(json: String, empty: bool, now_ms: u64) -> Payload {
    Payload::new(json.into_bytes(), empty, now_ms)
}

/// `{"applications":...}` with every instance: the full fetch.
pub(crate) fn applications(apps: &AppTable, now_ms: u64) -> Payload {
    listing(apps, |_| true, 1, now_ms).0
}

/// `{"applications":...}` with the instances for which `keep` holds: a VIP's. A VIP that no
/// instance has is answered (empty, as Eureka does) but not kept.
pub(crate) fn vip(apps: &AppTable, keep: impl Fn(&InstanceInfo) -> bool, now_ms: u64) -> Payload {
    match listing(apps, keep, -1, now_ms) {
        (payload, true) => payload,
        (payload, false) => payload.uncached(),
    }
}

/// `{"applications":...}` with every instance for which `keep` holds, and whether any did.
/// `versions_delta` is what the real server writes: 1 for a full fetch, -1 for a VIP's.
fn listing(
    apps: &AppTable,
    keep: impl Fn(&InstanceInfo) -> bool,
    versions_delta: i64,
    now_ms: u64,
) -> (Payload, bool) {
    let listing: Vec<_> = apps
        .iter()
        .filter_map(|(name, leases)| {
            let instances: Vec<_> = leases
                .values()
                .filter(|l| keep(&l.load()))
                .map(|l| decorate(l))
                .collect();
            (!instances.is_empty()).then(|| Application::new(name, instances))
        })
        .collect();
    let any = !listing.is_empty();
    let mut doc = Applications::new(listing);
    doc.versions_delta = versions_delta;
    (payload(doc.to_json(), false, now_ms), any)
}

/// `{"application":...}`; an absent or empty application is an empty payload (404).
pub(crate) fn application(
    name: &str,
    leases: Option<&BTreeMap<String, Arc<Lease>>>,
    now_ms: u64,
) -> Payload {
    let instances: Vec<_> = leases
        .into_iter()
        .flat_map(|m| m.values())
        .map(|l| decorate(l))
        .collect();
    let empty = instances.is_empty();
    payload(Application::new(name, instances).to_json(), empty, now_ms)
}

/// The delta payload: every queued lease's current data, de-duplicated per id (latest wins),
/// with the hash of the whole registry.
pub(crate) fn delta(apps: &AppTable, queued: &[Arc<Lease>], version: u64, now_ms: u64) -> Payload {
    let mut changed: BTreeMap<String, BTreeMap<String, InstanceInfo>> = BTreeMap::new();
    for lease in queued {
        let info = decorate(lease);
        changed
            .entry(record::app(&info).to_owned())
            .or_default()
            .insert(record::id(&info), info);
    }
    let listing = changed
        .into_iter()
        .map(|(name, instances)| Application::new(&name, instances.into_values().collect()))
        .collect();
    let delta = Applications {
        versions_delta: i64::try_from(version).unwrap_or(i64::MAX),
        apps_hashcode: reconcile_hash(
            apps.values()
                .flat_map(|m| m.values())
                .map(|l| record::status(&l.load())),
        ),
        applications: listing,
        skipped: 0,
    };
    payload(delta.to_json(), false, now_ms)
}
