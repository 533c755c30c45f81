//! The local copy of the registry: an immutable snapshot rebuilt from a full fetch or a delta,
//! with each application's routable instances precomputed for lock-free reads.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use feign_lb::{Instances, ServiceInstance};
use rand::seq::SliceRandom;

use crate::model::{
    read_metadata, read_port, ActionType, Application, Applications, InstanceInfo, InstanceStatus,
    InstanceView, ListedDocument, ListedInstance, PortInfo, StatusCounts,
};

use super::routing::{to_service_instance, Addresses, RoutingPolicy};

/// Where a member's full registration is kept.
#[derive(Clone, Debug)]
enum Registration {
    /// The instance's JSON text from a full listing: one allocation instead of one per field,
    /// compared as it is at the next full fetch, and read in full only when asked for.
    Text(Arc<str>),
    /// A registration read in full (deltas, listings given as model types). When the member is
    /// routable its metadata lives in `routable` only (moved, not copied).
    Info(Arc<InstanceInfo>),
}

/// One registered instance and, if it may receive traffic, how to reach it.
#[derive(Clone, Debug)]
struct Member {
    status: InstanceStatus,
    registration: Registration,
    routable: Option<ServiceInstance>,
    /// The `vipAddress` of a routable member that names other services than its application
    /// (the only ones VIP lookups need).
    vip_address: Option<Arc<str>>,
}

impl Member {
    fn status(&self) -> InstanceStatus {
        self.status
    }

    /// The registration as it was read, metadata included (`None` only if a kept text no longer
    /// reads, which cannot happen: it was read when the member was built).
    fn to_info(&self) -> Option<InstanceInfo> {
        match &self.registration {
            Registration::Text(text) => serde_json::from_str(text).ok(),
            Registration::Info(info) => {
                let mut info = (**info).clone();
                if let Some(routable) = &self.routable {
                    info.metadata = routable.metadata().clone();
                }
                Some(info)
            }
        }
    }

    /// Whether this member was built from a registration equal to `info` (and so can be kept
    /// as it is). `info` is handed back unchanged.
    fn is_built_from(&self, info: &mut InstanceInfo) -> bool {
        let Registration::Info(own) = &self.registration else {
            return false;
        };
        match &self.routable {
            None => **own == *info,
            Some(routable) => {
                let metadata = std::mem::take(&mut info.metadata);
                let same = **own == *info && metadata == *routable.metadata();
                info.metadata = metadata;
                same
            }
        }
    }

    /// Whether this member was built from exactly this JSON text.
    fn is_built_from_text(&self, text: &str) -> bool {
        let Registration::Text(own) = &self.registration else {
            return false;
        };
        // Eureka writes the timestamps a change moves last, so the end tells most changes
        // apart without reading the whole of the older copy.
        let tail = text.len().saturating_sub(64);
        own.len() == text.len()
            && own.as_bytes()[tail..] == text.as_bytes()[tail..]
            && **own == *text
    }
}

/// Members by instance id; the key is shared with the routable instance's id.
type Members = BTreeMap<Arc<str>, Member>;

/// One application of the local copy.
#[derive(Debug)]
struct AppEntry {
    /// Upper-case name.
    name: String,
    /// Lower-case name, the service id of every routable instance.
    service_id: Arc<str>,
    /// Every instance, by instance id (all statuses: the reconcile hash counts them all).
    members: Members,
    /// The routable instances, shuffled.
    routable: Instances,
    /// Upper-case VIP addresses of routable instances that differ from the name.
    foreign_vips: Vec<String>,
}

impl AppEntry {
    fn new(name: String, service_id: Arc<str>, members: Members) -> AppEntry {
        let mut routable: Vec<ServiceInstance> = members
            .values()
            .filter_map(|m| m.routable.clone())
            .collect();
        routable.shuffle(&mut rand::rng());
        let mut foreign_vips: Vec<String> = Vec::new();
        for member in members.values().filter(|m| m.routable.is_some()) {
            for vip in member.vip_address.iter().flat_map(|v| v.split(',')) {
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
            service_id,
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
    /// Whether this snapshot came from a server (false for the initial empty one and for a
    /// backup registry).
    pub(crate) fetched: bool,
}

/// What a new member is built in: its application and the metadata maps read so far.
struct Building<'a, 'doc> {
    /// Upper-case application name.
    app: &'a str,
    service_id: &'a Arc<str>,
    policy: &'a RoutingPolicy,
    shared: &'a mut DocumentValues<'doc>,
    excluded: &'a mut Excluded,
}

/// Values read once per document and shared, by their JSON text: instances of one service
/// mostly carry the same metadata, and nearly all instances the same ports.
#[derive(Default)]
struct DocumentValues<'doc> {
    metadata: HashMap<&'doc str, Arc<BTreeMap<String, String>>>,
    ports: HashMap<&'doc str, Option<PortInfo>>,
}

impl<'doc> Building<'_, 'doc> {
    /// The routable instance for these addresses, or `None` (recorded in `excluded` when the
    /// registration is unusable). `metadata` is called only for a routable instance.
    fn routable(
        &mut self,
        id: &Arc<str>,
        addresses: &Addresses<'_>,
        status: InstanceStatus,
        metadata: impl FnOnce(&mut Self) -> Arc<BTreeMap<String, String>>,
    ) -> Option<ServiceInstance> {
        let (service_id, policy) = (self.service_id, self.policy);
        match to_service_instance(addresses, status, id, service_id, policy, || metadata(self)) {
            Ok(routable) => routable,
            Err(reason) => {
                self.excluded.push((id.to_string(), reason));
                None
            }
        }
    }

    /// The metadata map written as `text`, read at its first use in the document (one that
    /// cannot be read, which a validated document never has, reads as empty).
    fn shared_metadata(&mut self, text: &'doc str) -> Arc<BTreeMap<String, String>> {
        self.shared
            .metadata
            .entry(text)
            .or_insert_with(|| Arc::new(read_metadata(text).unwrap_or_default()))
            .clone()
    }

    /// The port written as `text` (`default` when absent or of no usable shape), read at its
    /// first use in the document.
    fn shared_port(&mut self, text: Option<&'doc str>, default: PortInfo) -> PortInfo {
        let read = text.and_then(|text| {
            *self
                .shared
                .ports
                .entry(text)
                .or_insert_with(|| read_port(text))
        });
        read.unwrap_or(default)
    }

    /// `vip_address` if it names a service other than the application (see [`Member`]).
    fn foreign_vips(&self, vip_address: Option<&str>) -> Option<Arc<str>> {
        let vips = vip_address?;
        vips.split(',')
            .map(str::trim)
            .any(|vip| !vip.is_empty() && !vip.eq_ignore_ascii_case(self.app))
            .then(|| Arc::from(vips))
    }

    /// What every member has, whatever its registration is kept as: its id, and if it may
    /// receive traffic its routable instance and foreign VIPs; `None` (recorded in `excluded`)
    /// when it has no id or app.
    fn parts(
        &mut self,
        id: &str,
        app: &str,
        addresses: &Addresses<'_>,
        status: InstanceStatus,
        vip_address: Option<&str>,
        metadata: impl FnOnce(&mut Self) -> Arc<BTreeMap<String, String>>,
    ) -> Option<Parts> {
        if id.is_empty() || app.is_empty() {
            self.excluded.push((id.to_owned(), "no instance id or app"));
            return None;
        }
        let id: Arc<str> = Arc::from(id);
        let routable = self.routable(&id, addresses, status, metadata);
        let vip_address = match routable {
            Some(_) => self.foreign_vips(vip_address),
            None => None,
        };
        Some(Parts {
            id,
            routable,
            vip_address,
        })
    }

    /// A member for `info`, or `None` (recorded in `excluded`) when it has no id or app.
    fn member_of_info(&mut self, mut info: InstanceInfo) -> Option<(Arc<str>, Member)> {
        let mut metadata = Some(std::mem::take(&mut info.metadata));
        let parts = self.parts(
            info.id(),
            &info.app,
            &Addresses::from(&info),
            info.status,
            info.vip_address.as_deref(),
            |_| Arc::new(metadata.take().unwrap_or_default()),
        )?;
        if let Some(metadata) = metadata {
            info.metadata = metadata; // not routable: the registration keeps it
        }
        Some(parts.member(info.status, Registration::Info(Arc::new(info))))
    }

    /// A member for an instance's JSON text and its view, or `None` (recorded in `excluded`)
    /// when it has no id or app.
    fn member_of_text(
        &mut self,
        text: &str,
        view: &InstanceView<'doc>,
    ) -> Option<(Arc<str>, Member)> {
        let addresses = Addresses {
            host_name: &view.host_name,
            ip_addr: &view.ip_addr,
            port: self.shared_port(view.port, PortInfo::default_port()),
            secure_port: self.shared_port(view.secure_port, PortInfo::default_secure_port()),
            health_check_urls: view.health_check_urls.each_ref().map(Option::as_deref),
        };
        let parts = self.parts(
            view.id(),
            &view.app,
            &addresses,
            view.status,
            view.vip_address.as_deref(),
            |building| building.shared_metadata(view.metadata.unwrap_or("{}")),
        )?;
        Some(parts.member(view.status, Registration::Text(Arc::from(text))))
    }
}

/// What every member has, whatever its registration is kept as (see [`Building::parts`]).
struct Parts {
    id: Arc<str>,
    routable: Option<ServiceInstance>,
    vip_address: Option<Arc<str>>,
}

impl Parts {
    /// The member with this status and registration, by its id.
    fn member(self, status: InstanceStatus, registration: Registration) -> (Arc<str>, Member) {
        let member = Member {
            status,
            registration,
            routable: self.routable,
            vip_address: self.vip_address,
        };
        (self.id, member)
    }
}

/// A delta's changes to one application, by instance id: the new member, or `None` to remove.
type Changes = BTreeMap<String, Option<(Arc<str>, Member)>>;

/// An application being assembled from a full listing.
struct Assembly {
    /// Upper-case name.
    name: String,
    service_id: Arc<str>,
    members: Members,
    /// Members taken over unchanged from the previous snapshot's entry.
    kept: usize,
}

impl Snapshot {
    /// A snapshot of a full registry listing given as model types (see [`Snapshot::from_listing`]).
    pub(crate) fn from_full(
        apps: Applications,
        previous: &Snapshot,
        policy: &RoutingPolicy,
    ) -> (Snapshot, Excluded) {
        Snapshot::from_listing(ListedDocument::from_model(apps), previous, policy)
    }

    /// A snapshot of a full registry listing. Instances equal to those of `previous` are taken
    /// over as they are (no new routable instance is built; an instance kept as its JSON text
    /// is compared as text), and an application whose instances are all unchanged keeps its
    /// entry, shuffled order included; so a periodic full fetch of a mostly unchanged registry
    /// costs little more than reading it.
    pub(crate) fn from_listing(
        document: ListedDocument<'_>,
        previous: &Snapshot,
        policy: &RoutingPolicy,
    ) -> (Snapshot, Excluded) {
        let ListedDocument { listing, text } = document;
        let mut excluded = Excluded::new();
        let mut counts = StatusCounts::default();
        let mut shared = DocumentValues::default();
        let mut assembled: HashMap<String, Assembly> =
            HashMap::with_capacity(listing.applications.len());
        for app in listing.applications {
            let mut name = app.name;
            name.make_ascii_uppercase();
            let old = previous.apps.get(&name);
            let assembly = assembled.entry(name).or_insert_with_key(|name| Assembly {
                name: name.clone(),
                service_id: old.map_or_else(
                    || Arc::from(name.to_ascii_lowercase()),
                    |e| e.service_id.clone(),
                ),
                members: Members::new(),
                kept: 0,
            });
            let mut building = Building {
                app: &assembly.name,
                service_id: &assembly.service_id,
                policy,
                shared: &mut shared,
                excluded: &mut excluded,
            };
            for instance in app.instances {
                let previous_member = |id: &str| old.and_then(|e| e.members.get_key_value(id));
                let (unchanged, built) = match instance {
                    ListedInstance::Listed(view) => match text.of(&view) {
                        Some(text) => match previous_member(view.id())
                            .filter(|(_, m)| m.is_built_from_text(text))
                        {
                            Some(unchanged) => (Some(unchanged), None),
                            None => (None, building.member_of_text(text, &view)),
                        },
                        None => {
                            let id = view.id().to_owned();
                            building.excluded.push((id, "instance text not found"));
                            continue;
                        }
                    },
                    ListedInstance::Read(mut info) => match previous_member(info.id())
                        .filter(|(_, m)| m.is_built_from(&mut info))
                    {
                        Some(unchanged) => (Some(unchanged), None),
                        None => (None, building.member_of_info(*info)),
                    },
                };
                let (id, m) = match (unchanged, built) {
                    (Some((id, m)), _) => {
                        assembly.kept += 1;
                        (id.clone(), m.clone())
                    }
                    (None, Some(built)) => built,
                    (None, None) => continue,
                };
                counts.add(m.status());
                if let Some(replaced) = assembly.members.insert(id, m) {
                    counts.remove(replaced.status());
                    assembly.kept = 0; // a duplicate id: rebuild the entry
                }
            }
        }
        let apps_map = assembled
            .into_iter()
            .map(|(name, a)| {
                let entry = match previous.apps.get(&name) {
                    Some(old) if a.kept == a.members.len() && a.kept == old.members.len() => {
                        old.clone()
                    }
                    _ => Arc::new(AppEntry::new(name.clone(), a.service_id, a.members)),
                };
                (name, entry)
            })
            .collect();
        let mut snapshot = Snapshot {
            apps: apps_map,
            vips: HashMap::new(),
            counts,
            delta_version: listing.versions_delta,
            fetched: true,
        };
        snapshot.reindex_vips();
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
        let mut touched: HashMap<String, Changes> = HashMap::new();
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
                        let service_id = match self.apps.get(&app_name) {
                            Some(entry) => entry.service_id.clone(),
                            None => Arc::from(app_name.to_ascii_lowercase()),
                        };
                        let mut building = Building {
                            app: &app_name,
                            service_id: &service_id,
                            policy,
                            shared: &mut DocumentValues::default(),
                            excluded: &mut excluded,
                        };
                        match building.member_of_info(info) {
                            Some(built) => Some(built),
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
            let (service_id, mut members) = match apps.get(&name) {
                Some(entry) => (entry.service_id.clone(), entry.members.clone()),
                None => (Arc::from(name.to_ascii_lowercase()), Members::new()),
            };
            for (id, change) in changes {
                if let Some(old) = members.remove(id.as_str()) {
                    counts.remove(old.status());
                }
                if let Some((id, new)) = change {
                    counts.add(new.status());
                    members.insert(id, new);
                }
            }
            if members.is_empty() {
                apps.remove(&name);
            } else {
                apps.insert(
                    name.clone(),
                    Arc::new(AppEntry::new(name, service_id, members)),
                );
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

    fn reindex_vips(&mut self) {
        let mut vips: HashMap<String, Vec<ServiceInstance>> = HashMap::new();
        for entry in self.apps.values().filter(|e| !e.foreign_vips.is_empty()) {
            for member in entry.members.values() {
                let Some(instance) = &member.routable else {
                    continue;
                };
                for vip in member.vip_address.iter().flat_map(|v| v.split(',')) {
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

    /// The status of one instance, by application and id.
    pub(crate) fn status_of(&self, app: &str, id: &str) -> Option<InstanceStatus> {
        self.apps
            .get(&app.to_ascii_uppercase())?
            .members
            .get(id)
            .map(Member::status)
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
                let instances = e.members.values().filter_map(Member::to_info).collect();
                Application::new(&e.name, instances)
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
        let (s, _) = Snapshot::from_full(full, &Snapshot::default(), &p);
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
    fn a_full_fetch_keeps_what_did_not_change_and_loses_no_metadata() {
        use InstanceStatus::*;
        let p = RoutingPolicy::default();
        let listing = |orders_2: InstanceStatus| {
            let mut with_zone = inst("orders", 1, Up, None);
            with_zone.metadata.insert("zone".into(), "zone-a".into());
            Applications::new(vec![
                Application::new("orders", vec![with_zone, inst("orders", 2, orders_2, None)]),
                Application::new("billing", vec![inst("billing", 3, Up, None)]),
            ])
        };
        let (first, _) = Snapshot::from_full(listing(Up), &Snapshot::default(), &p);
        let (same, _) = Snapshot::from_full(listing(Up), &first, &p);
        assert!(Arc::ptr_eq(&first.apps["ORDERS"], &same.apps["ORDERS"]));
        assert!(Arc::ptr_eq(&first.apps["BILLING"], &same.apps["BILLING"]));

        let (changed, _) = Snapshot::from_full(listing(Down), &same, &p);
        assert!(!Arc::ptr_eq(&same.apps["ORDERS"], &changed.apps["ORDERS"]));
        assert!(Arc::ptr_eq(&same.apps["BILLING"], &changed.apps["BILLING"]));
        let kept = |s: &Snapshot| match &s.apps["ORDERS"].members["orders-1"].registration {
            Registration::Info(info) => info.clone(),
            Registration::Text(text) => panic!("a listing given as model types kept {text}"),
        };
        assert!(
            Arc::ptr_eq(&kept(&same), &kept(&changed)),
            "orders-1 is taken over"
        );
        assert_eq!(changed.hash_code(), "DOWN_1_UP_2_");
        assert_eq!(changed.lookup("orders").unwrap().len(), 1);
        assert_eq!(changed.lookup("orders").unwrap()[0].zone(), Some("zone-a"));

        // The metadata moved into the routable instance comes back in the listing.
        let mut expected = listing(Down);
        expected.applications.sort_by(|a, b| a.name.cmp(&b.name));
        let mut listed = changed.to_applications();
        listed.versions_delta = expected.versions_delta;
        assert_eq!(listed, expected);
    }

    /// A full fetch read from JSON keeps each instance's text: an unchanged one is taken over,
    /// a changed one rebuilt, and the listing read back equals the model's reading.
    #[test]
    fn a_fetched_listing_is_kept_as_text_and_reads_back_in_full() {
        use InstanceStatus::*;
        let p = RoutingPolicy::default();
        let listing = |orders_2: InstanceStatus| {
            let mut with_zone = inst("orders", 1, Up, None);
            with_zone.metadata.insert("zone".into(), "zone-a".into());
            with_zone.vip_address = Some("orders,shop".into());
            let mut apps = Applications::new(vec![
                Application::new("orders", vec![with_zone, inst("orders", 2, orders_2, None)]),
                Application::new("billing", vec![inst("billing", 3, Up, None)]),
            ]);
            apps.applications.sort_by(|a, b| a.name.cmp(&b.name));
            apps.to_json()
        };
        let read = |json: &str, previous: &Snapshot| {
            let document = ListedDocument::read(json.as_bytes()).unwrap();
            Snapshot::from_listing(document, previous, &p).0
        };
        let first = read(&listing(Up), &Snapshot::default());
        let same = read(&listing(Up), &first);
        assert!(Arc::ptr_eq(&first.apps["ORDERS"], &same.apps["ORDERS"]));
        let changed = read(&listing(Down), &same);
        assert!(!Arc::ptr_eq(&same.apps["ORDERS"], &changed.apps["ORDERS"]));
        assert!(Arc::ptr_eq(&same.apps["BILLING"], &changed.apps["BILLING"]));
        let text = |s: &Snapshot, id: &str| match &s.apps["ORDERS"].members[id].registration {
            Registration::Text(text) => text.clone(),
            Registration::Info(_) => panic!("a fetched listing kept as model types"),
        };
        assert!(Arc::ptr_eq(
            &text(&same, "orders-1"),
            &text(&changed, "orders-1")
        ));
        assert!(!Arc::ptr_eq(
            &text(&same, "orders-2"),
            &text(&changed, "orders-2")
        ));
        assert_eq!(changed.hash_code(), "DOWN_1_UP_2_");
        assert_eq!(changed.lookup("orders").unwrap()[0].zone(), Some("zone-a"));
        assert_eq!(changed.lookup("SHOP").unwrap().len(), 1);

        let mut listed = changed.to_applications();
        listed.versions_delta = 1;
        assert_eq!(
            listed,
            Applications::from_json(listing(Down).as_bytes()).unwrap()
        );
    }

    #[test]
    fn lookup_by_vip_address() {
        let mut i = inst("java-svc", 1, InstanceStatus::Up, None);
        i.vip_address = Some("java-vip,other".into());
        let (s, _) = Snapshot::from_full(
            Applications::new(vec![Application::new("java-svc", vec![i])]),
            &Snapshot::default(),
            &RoutingPolicy::default(),
        );
        assert_eq!(s.lookup("JAVA-VIP").unwrap().len(), 1);
        assert_eq!(s.lookup("java-svc").unwrap().len(), 1);
        assert!(s.lookup("nope").is_none());
    }
}
