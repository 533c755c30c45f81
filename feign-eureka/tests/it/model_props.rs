//! Properties of the Eureka wire model over generated documents: every valid instance,
//! application and listing reads back as written; the client's one-pass reader of a full fetch
//! routes as the full model does; Eureka's lenient spellings read as the strict ones; and no
//! mutation of a valid document (truncation, byte flips, a value of another type) makes a reader
//! panic.
//!
//! Case counts come from `PROPTEST_CASES` when set (see `feign_test_support::proptest_cases`).

use std::collections::BTreeMap;

use feign_eureka::model::{
    ActionType, Application, Applications, DataCenterInfo, InstanceInfo, InstanceStatus, LeaseInfo,
    PortInfo,
};
use feign_eureka::RegistryCache;
use feign_test_support::mutation::{mutate, mutate_all, mutation};
use feign_test_support::proptest_cases;
use proptest::prelude::*;
use serde_json::Value;

/// Text as registrations carry it: mostly printable ASCII, sometimes any character, sometimes
/// the bytes JSON must escape (which the one-pass reader decodes differently from plain text).
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[ -~]{0,12}",
        1 => "\\PC{0,8}",
        1 => "[\"\\\\/\u{0}-\u{1f}a\u{e9}\u{1F600}]{0,6}",
    ]
}

/// Host names and addresses: routable ones, ones routing refuses, and any text.
fn host() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (1u8..=254).prop_map(|n| format!("10.0.0.{n}")),
        1 => prop::sample::select(vec![
            "127.0.0.1", "[::1]", "::1", "orders-1.example", "0.0.0.0", "169.254.169.254",
            "255.255.255.255", "224.0.0.1", "bad host", "a/b", "",
        ])
        .prop_map(str::to_owned),
        1 => text(),
    ]
}

fn status() -> impl Strategy<Value = InstanceStatus> {
    prop::sample::select(vec![
        InstanceStatus::Up,
        InstanceStatus::Up,
        InstanceStatus::Down,
        InstanceStatus::Starting,
        InstanceStatus::OutOfService,
        InstanceStatus::Unknown,
    ])
}

fn port() -> impl Strategy<Value = PortInfo> {
    (
        prop_oneof![Just(0u16), Just(8080), any::<u16>()],
        any::<bool>(),
    )
        .prop_map(|(port, enabled)| PortInfo { port, enabled })
}

/// A metadata map as Eureka carries it: any keys but `@class`, which readers drop.
fn metadata() -> impl Strategy<Value = BTreeMap<String, String>> {
    let key = prop_oneof![
        Just("zone".to_owned()),
        Just("version".to_owned()),
        Just("instance-id".to_owned()),
        Just("weight".to_owned()),
        text(),
    ]
    .prop_filter("readers drop @class", |k| k != "@class");
    let value = prop_oneof![text(), any::<u32>().prop_map(|n| n.to_string())];
    prop::collection::btree_map(key, value, 0..4)
}

fn data_center() -> impl Strategy<Value = Option<DataCenterInfo>> {
    prop_oneof![
        Just(None),
        Just(Some(DataCenterInfo::my_own())),
        metadata().prop_map(|m| Some(DataCenterInfo::amazon(m))),
        Just(Some(DataCenterInfo {
            name: "Netflix".to_owned(),
            ..DataCenterInfo::my_own()
        })),
    ]
}

fn lease() -> impl Strategy<Value = Option<LeaseInfo>> {
    let lease = (1..=u32::MAX, 1..=u32::MAX, [any::<u64>(); 4]).prop_map(
        |(renewal, duration, [registration, renewed, evicted, up])| LeaseInfo {
            registration_timestamp: registration,
            last_renewal_timestamp: renewed,
            eviction_timestamp: evicted,
            service_up_timestamp: up,
            ..LeaseInfo::new(renewal, duration)
        },
    );
    prop::option::of(lease)
}

fn upper(mut s: String) -> String {
    s.make_ascii_uppercase();
    s
}

/// Any instance a reader must read back exactly: the constraints are only those the wire
/// format itself imposes (upper-case `app`, an unset `sid` is not written).
fn instance() -> impl Strategy<Value = InstanceInfo> {
    let identity = (
        prop::option::of(prop_oneof![Just(String::new()), text()]),
        host(),
        prop_oneof![Just("orders".to_owned()), text()].prop_map(upper),
        host(),
        prop::option::of(text()).prop_map(|sid| sid.filter(|s| s != "na" && s != "unknown")),
    );
    let state = (
        status(),
        status(),
        port(),
        port(),
        any::<i64>(),
        data_center(),
        lease(),
        metadata(),
    );
    let optional = (
        prop::option::of(text().prop_map(upper)),
        prop::collection::vec(prop::option::of(text()), 6),
        any::<bool>(),
        prop::option::of(any::<u64>()),
        prop::option::of(any::<u64>()),
        prop::option::of(prop::sample::select(vec![
            ActionType::Added,
            ActionType::Modified,
            ActionType::Deleted,
        ])),
        prop::option::of(text()),
    );
    (identity, state, optional).prop_map(
        |(
            (instance_id, host_name, app, ip_addr, sid),
            (status, overridden, port, secure_port, country_id, dc, lease, metadata),
            (group, urls, coordinating, updated, dirty, action_type, asg_name),
        )| {
            let mut info = InstanceInfo::new(&app, host_name, ip_addr, 0);
            info.instance_id = instance_id;
            info.sid = sid;
            info.status = status;
            info.overridden_status = overridden;
            info.port = port;
            info.secure_port = secure_port;
            info.country_id = country_id;
            info.data_center_info = dc;
            info.lease_info = lease;
            info.metadata = metadata;
            info.app_group_name = group;
            let [home, status_page, health, secure_health, vip, secure_vip] =
                <[Option<String>; 6]>::try_from(urls).expect("six optional fields");
            info.home_page_url = home;
            info.status_page_url = status_page;
            info.health_check_url = health;
            info.secure_health_check_url = secure_health;
            info.vip_address = vip;
            info.secure_vip_address = secure_vip;
            info.is_coordinating_discovery_server = coordinating;
            info.last_updated_timestamp = updated;
            info.last_dirty_timestamp = dirty;
            info.action_type = action_type;
            info.asg_name = asg_name;
            info
        },
    )
}

fn application() -> impl Strategy<Value = Application> {
    (
        prop_oneof![Just("orders".to_owned()), Just("users".to_owned()), text()],
        prop::collection::vec(instance(), 0..4),
    )
        .prop_map(|(name, instances)| Application::new(&name, instances))
}

/// A listing with its own hash, or a server's hash that does not match it (a delta's).
pub(crate) fn applications() -> impl Strategy<Value = Applications> {
    (
        prop::collection::vec(application(), 0..4),
        any::<i64>(),
        prop::option::of(text()),
    )
        .prop_map(|(apps, versions_delta, hash)| {
            let mut apps = Applications::new(apps);
            apps.versions_delta = versions_delta;
            if let Some(hash) = hash {
                apps.apps_hashcode = hash;
            }
            apps
        })
}

/// Every name a service may be looked up by in `apps`: application names and VIPs.
fn service_names(apps: &Applications) -> Vec<String> {
    let mut names: Vec<String> = apps
        .applications
        .iter()
        .flat_map(|a| {
            std::iter::once(a.name.clone()).chain(
                a.instances
                    .iter()
                    .filter_map(|i| i.vip_address.clone())
                    .flat_map(|v| v.split(',').map(str::to_owned).collect::<Vec<_>>()),
            )
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What routing sees of `service` in `cache`: each routable instance's id, address,
/// security, zone and metadata, sorted.
fn routing_view(cache: &RegistryCache, service: &str) -> Vec<String> {
    let mut view: Vec<String> = cache
        .instances(service)
        .unwrap_or_default()
        .iter()
        .map(|i| {
            format!(
                "{} {} {}:{} secure={} zone={:?} {:?}",
                i.instance_id(),
                i.base_url(),
                i.host(),
                i.port(),
                i.is_secure(),
                i.zone(),
                i.metadata()
            )
        })
        .collect();
    view.sort();
    view
}

/// Reads `document` with the client's one-pass reader and `apps` (the model's reading of it)
/// through the model, and checks that both caches route alike.
fn check_readers_agree(document: &[u8], apps: Applications) -> Result<(), TestCaseError> {
    let services = service_names(&apps);
    let listed = RegistryCache::new();
    let read = listed.replace_from_json(document);
    prop_assert!(
        read.is_ok(),
        "the one-pass reader refused it: {read:?}\n{:?}",
        String::from_utf8_lossy(document)
    );
    let modelled = RegistryCache::new();
    modelled.replace(apps);
    prop_assert_eq!(listed.instance_count(), modelled.instance_count());
    prop_assert_eq!(listed.hash_code(), modelled.hash_code());
    for service in &services {
        prop_assert_eq!(
            routing_view(&listed, service),
            routing_view(&modelled, service),
            "service {:?}",
            service
        );
    }
    // Read again over itself: every unchanged instance is taken over as it was.
    listed
        .replace_from_json(document)
        .map_err(|e| TestCaseError::fail(format!("second read: {e}")))?;
    for service in &services {
        prop_assert_eq!(
            routing_view(&listed, service),
            routing_view(&modelled, service)
        );
    }
    Ok(())
}

/// Picks one choice after another from a generated list of bits (cycling).
pub(crate) struct Choices<'a> {
    bits: &'a [bool],
    next: usize,
}

impl<'a> Choices<'a> {
    /// Choices from `bits`, which must not be empty.
    pub(crate) fn new(bits: &'a [bool]) -> Choices<'a> {
        Choices { bits, next: 0 }
    }

    pub(crate) fn take(&mut self) -> bool {
        let bit = self.bits[self.next % self.bits.len()];
        self.next += 1;
        bit
    }
}

/// A number written as a string, or a string that holds a canonical number written as one.
fn swap_number_and_string(value: &mut Value) {
    match value {
        Value::Number(n) => *value = Value::String(n.to_string()),
        Value::String(s) => {
            if let Ok(n) = s.parse::<u64>() {
                if n.to_string() == *s {
                    *value = Value::from(n);
                }
            } else if let Ok(n) = s.parse::<i64>() {
                if n.to_string() == *s {
                    *value = Value::from(n);
                }
            }
        }
        _ => {}
    }
}

/// Rewrites an instance as older or other Eureka servers and clients write it.
fn lenient_instance(instance: &mut Value, choices: &mut Choices<'_>) {
    let Value::Object(map) = instance else { return };
    for key in ["countryId", "lastUpdatedTimestamp", "lastDirtyTimestamp"] {
        if let (Some(value), true) = (map.get_mut(key), choices.take()) {
            swap_number_and_string(value);
        }
    }
    if choices.take() {
        if let Some(flag) = map.get_mut("isCoordinatingDiscoveryServer") {
            *flag = Value::Bool(*flag == "true");
        }
    }
    for key in ["port", "securePort"] {
        let Some(port) = map.get_mut(key) else {
            continue;
        };
        let number = port["$"].clone();
        let enabled = port["@enabled"] == "true";
        match (choices.take(), choices.take()) {
            // An enabled port written as a bare number or numeric string.
            (true, true) if enabled => *port = number,
            (true, false) if enabled => *port = Value::String(number.to_string()),
            // `$` as a string, `@enabled` as a boolean.
            _ => {
                swap_number_and_string(&mut port["$"]);
                port["@enabled"] = Value::Bool(enabled);
            }
        }
    }
    if choices.take() {
        if let Some(status) = map.remove("overriddenStatus") {
            map.insert("overriddenstatus".to_owned(), status);
        }
    }
    if let Some(Value::Object(lease)) = map.get_mut("leaseInfo") {
        for value in lease.values_mut() {
            if choices.take() {
                swap_number_and_string(value);
            }
        }
        if choices.take() {
            if let Some(renewed) = lease.remove("lastRenewalTimestamp") {
                lease.insert("renewalTimestamp".to_owned(), renewed);
            }
        }
    }
    if let Some(Value::Object(metadata)) = map.get_mut("metadata") {
        if metadata.len() == 1 && metadata.contains_key("@class") && choices.take() {
            metadata.clear();
        } else if choices.take() {
            metadata.insert("@class".to_owned(), "java.util.HashMap".into());
        }
        for value in metadata.values_mut() {
            if choices.take() {
                swap_number_and_string(value);
            }
        }
    }
    for key in ["instanceId", "sid", "asgName", "vipAddress", "homePageUrl"] {
        if !map.contains_key(key) && choices.take() {
            map.insert(key.to_owned(), Value::Null);
        }
    }
    if choices.take() {
        map.insert(
            "unknownKey".to_owned(),
            serde_json::json!([1, {"nested": null}, "x"]),
        );
    }
}

/// Rewrites a listing as older or other Eureka servers write it: numbers as strings, a lone
/// object where a one-element array is expected, legacy key names, `@class` markers, nulls
/// for absent values and unknown keys.
fn lenient_listing(document: &mut Value, choices: &mut Choices<'_>) {
    let listing = &mut document["applications"];
    if choices.take() {
        swap_number_and_string(&mut listing["versions__delta"]);
    }
    let Value::Array(apps) = &mut listing["application"] else {
        return;
    };
    for app in apps.iter_mut() {
        let Value::Array(instances) = &mut app["instance"] else {
            continue;
        };
        for instance in instances.iter_mut() {
            lenient_instance(instance, choices);
        }
        if instances.len() == 1 && choices.take() {
            app["instance"] = instances.pop().expect("one instance");
        }
    }
    if apps.len() == 1 && choices.take() {
        listing["application"] = apps.pop().expect("one application");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(proptest_cases(256)))]

    /// An instance, an application and a listing each read back exactly as they were, and are
    /// written again byte for byte.
    #[test]
    fn valid_documents_round_trip(apps in applications()) {
        for app in &apps.applications {
            for info in &app.instances {
                let read = InstanceInfo::from_json(info.to_json().as_bytes()).expect("own instance");
                prop_assert_eq!(&read, info);
            }
            let read = Application::from_json(app.to_json().as_bytes()).expect("own application");
            prop_assert_eq!(&read, app);
        }
        let text = apps.to_json();
        let read = Applications::from_json(text.as_bytes()).expect("own listing");
        prop_assert_eq!(read.to_json(), text);
        prop_assert_eq!(read, apps);
    }

    /// The client reads a full fetch in one pass, keeping only what routing needs: it routes
    /// every written listing as the full model does.
    #[test]
    fn the_one_pass_reader_routes_as_the_model_does(apps in applications()) {
        check_readers_agree(apps.to_json().as_bytes(), apps)?;
    }

    /// Numbers as strings, lone objects for one-element arrays, `overriddenstatus`,
    /// `renewalTimestamp`, `@class` in metadata, nulls and unknown keys read as the strict form;
    /// the one-pass reader agrees with the model on them too.
    #[test]
    fn lenient_forms_read_as_the_strict_form(
        apps in applications(),
        bits in prop::collection::vec(any::<bool>(), 1..64),
    ) {
        let mut document: Value = serde_json::from_str(&apps.to_json()).expect("own listing");
        lenient_listing(&mut document, &mut Choices::new(&bits));
        let text = document.to_string();
        let read = Applications::from_json(text.as_bytes())
            .map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert_eq!(&read, &apps, "{}", text);
        check_readers_agree(text.as_bytes(), read)?;
    }

    /// A mutated document is read or refused, never a panic; the one-pass reader refuses
    /// exactly what the model refuses and routes what it reads as the model does.
    #[test]
    fn mutated_documents_are_read_or_refused(
        apps in applications(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let document: Value = serde_json::from_str(&apps.to_json()).expect("own listing");
        let bytes = mutate_all(&document, &mutations);
        let _ = InstanceInfo::from_json(&bytes);
        let _ = Application::from_json(&bytes);
        let _ = RegistryCache::new().apply_delta_json(&bytes);
        match Applications::from_json(&bytes) {
            Ok(read) => check_readers_agree(&bytes, read)?,
            // serde_json refuses a number beyond f64's range (`1E400`) where it reads one, and
            // lets it pass where it skips one: the one-pass reader skips the keys routing does
            // not need, so it may read what the model refuses. No Eureka server writes such a
            // number (Jackson writes finite doubles).
            Err(refused) if refused.to_string().starts_with("number out of range") => {}
            Err(refused) => prop_assert!(
                RegistryCache::new().replace_from_json(&bytes).is_err(),
                "the model refused it ({}), the one-pass reader did not: {:?}",
                refused,
                String::from_utf8_lossy(&bytes)
            ),
        }
        for info in apps.applications.iter().flat_map(|a| &a.instances) {
            let instance: Value = serde_json::from_str(&info.to_json()).expect("own instance");
            let _ = InstanceInfo::from_json(&mutate(&instance, &mutations[0]));
        }
    }
}

/// Found by `mutated_documents_are_read_or_refused`: invalid UTF-8 in a value no reader looks
/// at (an unknown key's) passed serde_json's byte reader, so the model read a document the
/// client's one-pass reader refused. JSON is UTF-8: every reader refuses it.
#[test]
fn invalid_utf8_under_an_unknown_key_is_refused_by_every_reader() {
    let listing = b"{\"applications\":{\"unknown\":\"\x80\",\"application\":[]}}";
    assert!(Applications::from_json(listing).is_err());
    assert!(RegistryCache::new().replace_from_json(listing).is_err());
    assert!(RegistryCache::new().apply_delta_json(listing).is_err());
    let application = b"{\"application\":{\"name\":\"A\",\"unknown\":\"\x80\"}}";
    assert!(Application::from_json(application).is_err());
    let instance = b"{\"instance\":{\"hostName\":\"h\",\"unknown\":\"\xff\"}}";
    assert!(InstanceInfo::from_json(instance).is_err());
    // The same documents in UTF-8 are read.
    let valid = |doc: &[u8]| String::from_utf8_lossy(doc).replace('\u{fffd}', "x");
    assert!(Applications::from_json(valid(listing).as_bytes()).is_ok());
    assert!(Application::from_json(valid(application).as_bytes()).is_ok());
    assert!(InstanceInfo::from_json(valid(instance).as_bytes()).is_ok());
}
