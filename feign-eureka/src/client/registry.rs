//! The local copy of the registry: an immutable snapshot rebuilt from a full fetch or a delta,
//! with each application's routable instances precomputed for lock-free reads.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use feign_lb::{Instances, ServiceInstance};
use rand::seq::SliceRandom;

use crate::model::{ActionType, Application, Applications, InstanceInfo, StatusCounts};

use super::routing::{to_service_instance, RoutingPolicy};

/// One registered instance and, if it may receive traffic, how to reach it.
#[derive(Debug)]
struct Member {
    info: Arc<InstanceInfo>,
    routable: Option<ServiceInstance>,
}

/// One application of the local copy.
#[derive(Debug)]
struct AppEntry {
    /// Upper-case name.
    name: String,
    /// Every instance, by instance id (all statuses: the reconcile hash counts them all).
    members: BTreeMap<String, Member>,
    /// The routable instances, shuffled.
    routable: Instances,
    /// Upper-case VIP addresses of routable instances that differ from the name.
    foreign_vips: Vec<String>,
}

impl AppEntry {
    fn new(name: String, members: BTreeMap<String, Member>) -> AppEntry {
        let mut routable: Vec<ServiceInstance> = members
            .values()
            .filter_map(|m| m.routable.clone())
            .collect();
        routable.shuffle(&mut rand::rng());
        let mut foreign_vips: Vec<String> = Vec::new();
        for member in members.values().filter(|m| m.routable.is_some()) {
            for vip in member.info.vip_address.iter().flat_map(|v| v.split(',')) {
                let vip = vip.trim();
                if vip.is_empty() || vip.eq_ignore_ascii_case(&name) {
                    continue;
                }
                let vip = vip.to_ascii_uppercase();
                if !foreign_vips.contains(&vip) {
                    foreign_vips.push(vip);
                }
            }
        }
        AppEntry {
            name,
            members,
            routable: routable.into(),
            foreign_vips,
        }
    }
}

/// What was left out while building a snapshot: `(instance id, reason)` pairs.
pub(crate) type Excluded = Vec<(String, &'static str)>;

/// An immutable view of the registry. Readers share it through an `ArcSwap`.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    apps: HashMap<String, Arc<AppEntry>>,
    vips: HashMap<String, Instances>,
    counts: StatusCounts,
    /// `versions__delta` of the last applied document.
    pub(crate) delta_version: i64,
    /// Whether this snapshot came from a server (false for the initial empty one).
    pub(crate) fetched: bool,
}

fn member(
    info: InstanceInfo,
    service_id: &Arc<str>,
    policy: &RoutingPolicy,
    excluded: &mut Excluded,
) -> Option<(String, Member)> {
    let id = info.id().to_owned();
    if id.is_empty() || info.app.is_empty() {
        excluded.push((id, "no instance id or app"));
        return None;
    }
    let routable = match to_service_instance(&info, service_id, policy) {
        Ok(instance) => instance,
        Err(reason) => {
            excluded.push((id.clone(), reason));
            None
        }
    };
    Some((
        id,
        Member {
            info: Arc::new(info),
            routable,
        },
    ))
}

impl Snapshot {
    /// A snapshot of a full registry listing.
    pub(crate) fn from_full(apps: Applications, policy: &RoutingPolicy) -> (Snapshot, Excluded) {
        let mut excluded = Excluded::new();
        let mut map: HashMap<String, BTreeMap<String, Member>> =
            HashMap::with_capacity(apps.applications.len());
        for app in apps.applications {
            let name = app.name.to_ascii_uppercase();
            let service_id: Arc<str> = Arc::from(name.to_ascii_lowercase());
            let members = map.entry(name).or_default();
            for info in app.instances {
                if let Some((id, m)) = member(info, &service_id, policy, &mut excluded) {
                    members.insert(id, m);
                }
            }
        }
        let apps_map = map
            .into_iter()
            .map(|(name, members)| (name.clone(), Arc::new(AppEntry::new(name, members))))
            .collect();
        let mut snapshot = Snapshot {
            apps: apps_map,
            delta_version: apps.versions_delta,
            fetched: true,
            ..Snapshot::default()
        };
        snapshot.reindex();
        (snapshot, excluded)
    }

    /// This snapshot with a delta applied: `ADDED`/`MODIFIED` upsert, `DELETED` removes (an
    /// unknown delete is ignored). Applying the same delta twice gives the same result.
    pub(crate) fn apply_delta(
        &self,
        delta: Applications,
        policy: &RoutingPolicy,
    ) -> (Snapshot, Excluded) {
        let mut excluded = Excluded::new();
        let mut touched: HashMap<String, BTreeMap<String, Option<Member>>> = HashMap::new();
        for app in delta.applications {
            for info in app.instances {
                let app_name = if info.app.is_empty() {
                    app.name.to_ascii_uppercase()
                } else {
                    info.app.clone()
                };
                let id = info.id().to_owned();
                let change = match info.action_type {
                    Some(ActionType::Deleted) => None,
                    Some(ActionType::Added | ActionType::Modified) | None => {
                        let mut info = info;
                        info.app = app_name.clone();
                        let service_id: Arc<str> = Arc::from(app_name.to_ascii_lowercase());
                        match member(info, &service_id, policy, &mut excluded) {
                            Some((_, m)) => Some(m),
                            None => continue,
                        }
                    }
                };
                touched.entry(app_name).or_default().insert(id, change);
            }
        }
        let mut apps = self.apps.clone();
        let mut counts = self.counts;
        for (name, changes) in touched {
            let mut members: BTreeMap<String, Member> = match apps.get(&name) {
                Some(entry) => entry
                    .members
                    .iter()
                    .map(|(id, m)| {
                        (
                            id.clone(),
                            Member {
                                info: m.info.clone(),
                                routable: m.routable.clone(),
                            },
                        )
                    })
                    .collect(),
                None => BTreeMap::new(),
            };
            for (id, change) in changes {
                if let Some(old) = members.remove(&id) {
                    counts.remove(old.info.status);
                }
                if let Some(new) = change {
                    counts.add(new.info.status);
                    members.insert(id, new);
                }
            }
            if members.is_empty() {
                apps.remove(&name);
            } else {
                apps.insert(name.clone(), Arc::new(AppEntry::new(name, members)));
            }
        }
        let mut snapshot = Snapshot {
            apps,
            vips: HashMap::new(),
            counts,
            delta_version: delta.versions_delta,
            fetched: true,
        };
        snapshot.reindex_vips();
        (snapshot, excluded)
    }

    fn reindex(&mut self) {
        let mut counts = StatusCounts::default();
        for entry in self.apps.values() {
            for m in entry.members.values() {
                counts.add(m.info.status);
            }
        }
        self.counts = counts;
        self.reindex_vips();
    }

    fn reindex_vips(&mut self) {
        let mut vips: HashMap<String, Vec<ServiceInstance>> = HashMap::new();
        for entry in self.apps.values().filter(|e| !e.foreign_vips.is_empty()) {
            for member in entry.members.values() {
                let Some(instance) = &member.routable else {
                    continue;
                };
                for vip in member.info.vip_address.iter().flat_map(|v| v.split(',')) {
                    let vip = vip.trim().to_ascii_uppercase();
                    if entry.foreign_vips.contains(&vip) {
                        vips.entry(vip).or_default().push(instance.clone());
                    }
                }
            }
        }
        self.vips = vips
            .into_iter()
            .map(|(k, v)| (k, Instances::from(v)))
            .collect();
    }

    /// The routable instances of `service` (an application name or VIP, any case).
    pub(crate) fn lookup(&self, service: &str) -> Option<Instances> {
        let upper;
        let key = if service.bytes().any(|b| b.is_ascii_lowercase()) {
            upper = service.to_ascii_uppercase();
            upper.as_str()
        } else {
            service
        };
        if let Some(entry) = self.apps.get(key) {
            return Some(entry.routable.clone());
        }
        self.vips.get(key).cloned()
    }

    /// The reconcile hash of every instance in this snapshot.
    pub(crate) fn hash_code(&self) -> String {
        self.counts.hash_code()
    }

    /// Whether no instance at all is known.
    pub(crate) fn is_empty(&self) -> bool {
        self.apps.is_empty()
    }

    /// The total number of instances.
    pub(crate) fn instance_count(&self) -> usize {
        self.apps.values().map(|e| e.members.len()).sum()
    }

    /// One instance by application and id.
    pub(crate) fn instance(&self, app: &str, id: &str) -> Option<Arc<InstanceInfo>> {
        self.apps
            .get(&app.to_ascii_uppercase())?
            .members
            .get(id)
            .map(|m| m.info.clone())
    }

    /// Instance counts per application (upper-case names).
    pub(crate) fn app_sizes(&self) -> HashMap<&str, usize> {
        self.apps
            .values()
            .map(|e| (e.name.as_str(), e.members.len()))
            .collect()
    }

    /// The snapshot as a model listing (instances cloned).
    pub(crate) fn to_applications(&self) -> Applications {
        let mut apps: Vec<Application> = self
            .apps
            .values()
            .map(|e| {
                Application::new(
                    &e.name,
                    e.members.values().map(|m| (*m.info).clone()).collect(),
                )
            })
            .collect();
        apps.sort_by(|a, b| a.name.cmp(&b.name));
        let mut listing = Applications::new(apps);
        listing.versions_delta = self.delta_version;
        listing
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::InstanceStatus;

    fn inst(app: &str, n: u8, status: InstanceStatus, action: Option<ActionType>) -> InstanceInfo {
        let mut i = InstanceInfo::new(app, format!("10.0.0.{n}"), format!("10.0.0.{n}"), 8080);
        i.instance_id = Some(format!("{app}-{n}"));
        i.status = status;
        i.action_type = action;
        i
    }

    fn delta(instances: Vec<InstanceInfo>, hash: &str) -> Applications {
        let mut d = Applications::new(vec![Application::new("orders", instances)]);
        d.apps_hashcode = hash.to_owned();
        d
    }

    #[test]
    fn delta_upserts_deletes_and_is_idempotent() {
        use InstanceStatus::*;
        let p = RoutingPolicy::default();
        let full = Applications::new(vec![Application::new(
            "orders",
            vec![inst("orders", 1, Up, None), inst("orders", 2, Up, None)],
        )]);
        let (s, _) = Snapshot::from_full(full, &p);
        assert_eq!(s.hash_code(), "UP_2_");
        let d = delta(
            vec![
                inst("orders", 1, Down, Some(ActionType::Added)),
                inst("orders", 3, Up, Some(ActionType::Added)),
                inst("orders", 2, Up, Some(ActionType::Deleted)),
                inst("orders", 9, Up, Some(ActionType::Deleted)),
            ],
            "DOWN_1_UP_1_",
        );
        let (s1, _) = s.apply_delta(d.clone(), &p);
        assert_eq!(s1.hash_code(), "DOWN_1_UP_1_");
        let (s2, _) = s1.apply_delta(d, &p);
        assert_eq!(s2.hash_code(), "DOWN_1_UP_1_");
        let routable = s2.lookup("Orders").unwrap();
        assert_eq!(routable.len(), 1);
        assert_eq!(routable[0].instance_id(), "orders-3");
    }

    #[test]
    fn lookup_by_vip_address() {
        let mut i = inst("java-svc", 1, InstanceStatus::Up, None);
        i.vip_address = Some("java-vip,other".into());
        let (s, _) = Snapshot::from_full(
            Applications::new(vec![Application::new("java-svc", vec![i])]),
            &RoutingPolicy::default(),
        );
        assert_eq!(s.lookup("JAVA-VIP").unwrap().len(), 1);
        assert_eq!(s.lookup("java-svc").unwrap().len(), 1);
        assert!(s.lookup("nope").is_none());
    }
}
