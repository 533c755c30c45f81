//! The Eureka JSON model against golden documents: exact output, tolerant input (case C4).

use feign_eureka::model::{
    reconcile_hash, ActionType, Application, Applications, DataCenterInfo, InstanceInfo,
    InstanceStatus, LeaseInfo, PortInfo,
};
use feign_test_support::eureka::INSTANCE_KEYS;

const FULL: &str = include_str!("../client_golden/full_registry.json");
const EMPTY: &str = include_str!("../client_golden/empty_registry.json");
const REGISTER: &str = include_str!("../client_golden/register_body_spec.json");
const LEGACY: &str = include_str!("../client_golden/legacy_variants.json");

#[test]
fn full_registry_round_trips_byte_for_byte() {
    let apps = Applications::from_json(FULL.as_bytes()).unwrap();
    assert_eq!(apps.to_json(), FULL.trim_end());
}

#[test]
fn empty_registry_round_trips_byte_for_byte() {
    let apps = Applications::from_json(EMPTY.as_bytes()).unwrap();
    assert_eq!(apps.to_json(), EMPTY.trim_end());
    assert_eq!(Applications::new(Vec::new()).to_json(), EMPTY.trim_end());
}

#[test]
fn full_registry_fields_are_read() {
    let apps = Applications::from_json(FULL.as_bytes()).unwrap();
    assert_eq!(apps.versions_delta, 1);
    assert_eq!(apps.apps_hashcode, "UP_2_");
    assert_eq!(apps.reconcile_hash_code(), "UP_2_");
    let java = &apps.application("java-svc").unwrap().instances[0];
    assert_eq!(java.id(), "192.168.1.10:java-svc:8081");
    assert_eq!(java.port, PortInfo::enabled(8081));
    assert_eq!(java.secure_port, PortInfo::disabled(443));
    assert_eq!(
        java.metadata.get("management.port").map(String::as_str),
        Some("8081")
    );
    assert_eq!(
        java.lease_info.unwrap().last_renewal_timestamp,
        1732881390456
    );
    assert_eq!(java.last_dirty_timestamp, Some(1732880999876));
    assert_eq!(java.action_type, Some(ActionType::Added));
    let rust = &apps.application("RUST-SVC").unwrap().instances[0];
    assert!(
        rust.metadata.is_empty(),
        "the @class marker is not metadata"
    );
}

#[test]
fn register_body_matches_the_protocol_example() {
    let mut info = InstanceInfo::new("rust-svc", "10.0.0.5", "10.0.0.5", 9000);
    info.instance_id = Some("10.0.0.5:rust-svc:9000".into());
    info.lease_info = Some(LeaseInfo::new(30, 90));
    info.metadata.insert("zone".into(), "defaultZone".into());
    info.home_page_url = Some("http://10.0.0.5:9000/".into());
    info.status_page_url = Some("http://10.0.0.5:9000/info".into());
    info.health_check_url = Some("http://10.0.0.5:9000/health".into());
    info.vip_address = Some("rust-svc".into());
    info.secure_vip_address = Some("rust-svc".into());
    info.last_updated_timestamp = Some(1732881099990);
    info.last_dirty_timestamp = Some(1732881099990);
    let written: serde_json::Value = serde_json::from_str(&info.to_json()).unwrap();
    let mut expected: serde_json::Value = serde_json::from_str(REGISTER).unwrap();
    // The model always writes every lease key (as the server does); the example sends two.
    let lease = expected["instance"]["leaseInfo"].as_object_mut().unwrap();
    for key in [
        "registrationTimestamp",
        "lastRenewalTimestamp",
        "evictionTimestamp",
        "serviceUpTimestamp",
    ] {
        lease.insert(key.into(), 0.into());
    }
    assert_eq!(written, expected);
    // Key order is Eureka's.
    let text = info.to_json();
    let positions: Vec<usize> = INSTANCE_KEYS
        .iter()
        .map(|k| text.find(&format!("\"{k}\":")).unwrap())
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn register_body_parses_back() {
    let info = InstanceInfo::from_json(REGISTER.as_bytes()).unwrap();
    assert_eq!(info.app, "RUST-SVC");
    assert_eq!(info.id(), "10.0.0.5:rust-svc:9000");
    assert_eq!(info.data_center_info, Some(DataCenterInfo::my_own()));
    assert_eq!(info.last_dirty_timestamp, Some(1732881099990));
}

#[test]
fn register_body_without_wrapper_is_an_error() {
    let err =
        InstanceInfo::from_json(br#"{"hostName":"h","app":"A","ipAddr":"1.2.3.4"}"#).unwrap_err();
    assert!(err.to_string().contains("instance"), "{err}");
}

#[test]
fn legacy_variants_parse() {
    let apps = Applications::from_json(LEGACY.as_bytes()).unwrap();
    assert_eq!(apps.versions_delta, 7);
    assert_eq!(
        apps.applications.len(),
        1,
        "single application object accepted"
    );
    let orders = &apps.applications[0];
    assert_eq!(orders.name, "ORDERS");
    assert_eq!(orders.instances.len(), 7);
    assert_eq!(
        orders.skipped, 1,
        "the string element is skipped, not fatal"
    );

    let a = &orders.instances[0];
    assert_eq!(a.app, "ORDERS");
    assert_eq!(a.port, PortInfo::enabled(8080), "\"$\" as a string");
    assert_eq!(
        a.secure_port,
        PortInfo::disabled(8443),
        "@enabled as a boolean"
    );
    assert_eq!(a.country_id, 1);
    assert_eq!(a.overridden_status, InstanceStatus::Unknown);
    let dc = a.data_center_info.as_ref().unwrap();
    assert!(!dc.has_known_class(), "unknown @class is kept as read");
    assert_eq!(dc.name, "MyOwn");
    let lease = a.lease_info.unwrap();
    assert_eq!(lease.renewal_interval_in_secs, 30);
    assert_eq!(
        lease.last_renewal_timestamp, 1700000000001,
        "legacy renewalTimestamp"
    );
    assert_eq!(a.metadata.get("weight").map(String::as_str), Some("5"));
    assert_eq!(a.metadata.get("canary").map(String::as_str), Some("true"));
    assert!(!a.metadata.contains_key("@class"));
    assert!(!a.metadata.contains_key("nested"));
    assert!(!a.metadata.contains_key("gone"));
    assert_eq!(a.last_updated_timestamp, Some(1700000000002));
    assert_eq!(a.last_dirty_timestamp, Some(1700000000003));

    let statuses: Vec<_> = orders.instances.iter().map(|i| i.status).collect();
    use InstanceStatus::*;
    assert_eq!(
        statuses,
        [Up, Up, Starting, Down, OutOfService, Unknown, Up]
    );
    assert_eq!(orders.instances[4].overridden_status, OutOfService);
    assert_eq!(
        orders.instances[6].ip_addr, "",
        "missing ipAddr reads as empty"
    );
    assert_eq!(
        orders.instances[2].secure_port,
        PortInfo::default_secure_port()
    );
    assert_eq!(apps.reconcile_hash_code(), apps.apps_hashcode);
}

#[test]
fn camel_case_override_wins_over_legacy_spelling() {
    let json = br#"{"instance":{"hostName":"h","app":"a","ipAddr":"1.1.1.1",
        "overriddenStatus":"OUT_OF_SERVICE","overriddenstatus":"UNKNOWN"}}"#;
    assert_eq!(
        InstanceInfo::from_json(json).unwrap().overridden_status,
        InstanceStatus::OutOfService
    );
}

#[test]
fn invalid_documents_are_errors_not_panics() {
    for doc in [
        &b"{"[..],
        b"<applications/>",
        b"",
        b"null",
        b"[]",
        b"{\"applications\":1}",
        b"{\"other\":{}}",
    ] {
        assert!(
            Applications::from_json(doc).is_err(),
            "{}",
            String::from_utf8_lossy(doc)
        );
    }
}

#[test]
fn out_of_range_ports_read_as_zero() {
    let json = br#"{"instance":{"hostName":"h","app":"a","ipAddr":"1.1.1.1","port":{"$":70000,"@enabled":"true"}}}"#;
    assert_eq!(InstanceInfo::from_json(json).unwrap().port.port, 0);
}

#[test]
fn reconcile_hash_orders_statuses_by_name() {
    use InstanceStatus::*;
    assert_eq!(reconcile_hash([Up, Down, Up, Up]), "DOWN_1_UP_3_");
    assert_eq!(
        reconcile_hash([Up, Starting, OutOfService, Starting]),
        "OUT_OF_SERVICE_1_STARTING_2_UP_1_"
    );
    assert_eq!(reconcile_hash([]), "");
    let apps = Applications::new(vec![Application::new(
        "x",
        vec![InstanceInfo::new("x", "h", "1.1.1.1", 1)],
    )]);
    assert_eq!(apps.apps_hashcode, "UP_1_");
}

#[test]
fn status_names_are_case_sensitive() {
    assert_eq!(InstanceStatus::from_wire("up"), InstanceStatus::Unknown);
    assert!("up".parse::<InstanceStatus>().is_err());
    assert_eq!(
        "OUT_OF_SERVICE".parse::<InstanceStatus>().unwrap(),
        InstanceStatus::OutOfService
    );
}

#[test]
fn amazon_data_center_writes_metadata_and_my_own_does_not() {
    let mut info = InstanceInfo::new("a", "h", "1.1.1.1", 1);
    assert!(!info.to_json().contains("\"dataCenterInfo\":{\"@class\":\"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo\",\"name\":\"MyOwn\",\"metadata\""));
    info.data_center_info = Some(DataCenterInfo::amazon(
        [("instance-id".to_owned(), "i-1".to_owned())].into(),
    ));
    info.host_name = "h".into();
    let json = info.to_json();
    assert!(json.contains(r#""dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":{"instance-id":"i-1"}}"#), "{json}");
}

mod fuzz {
    use std::sync::atomic::{AtomicU32, Ordering};

    use feign_eureka::model::{Applications, InstanceInfo};
    use feign_eureka::RegistryCache;
    use feign_test_support::proptest_cases;
    use proptest::prelude::*;
    use proptest::test_runner::TestRunner;

    /// Arbitrary JSON values, a few levels deep, with Eureka's key names mixed in.
    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let key = prop_oneof![
            Just("applications".to_owned()),
            Just("application".to_owned()),
            Just("instance".to_owned()),
            Just("port".to_owned()),
            Just("$".to_owned()),
            Just("@enabled".to_owned()),
            Just("metadata".to_owned()),
            Just("status".to_owned()),
            Just("leaseInfo".to_owned()),
            Just("dataCenterInfo".to_owned()),
            Just("versions__delta".to_owned()),
            "[a-zA-Z@$_]{0,12}",
        ];
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(
                |f| serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, Into::into)
            ),
            "[ -~]{0,16}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(5, 64, 8, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::vec((key.clone(), inner), 0..6)
                    .prop_map(|kv| serde_json::Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(proptest_cases(500)))]

        #[test]
        fn any_json_document_parses_or_errors_without_panicking(value in json_value()) {
            let wrapped = serde_json::json!({"applications": value}).to_string();
            let _ = Applications::from_json(wrapped.as_bytes());
            let wrapped = serde_json::json!({"instance": value}).to_string();
            let _ = InstanceInfo::from_json(wrapped.as_bytes());
            let _ = Applications::from_json(value.to_string().as_bytes());
        }

        #[test]
        fn any_bytes_parse_or_error_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = Applications::from_json(&bytes);
            let _ = InstanceInfo::from_json(&bytes);
            let _ = RegistryCache::new().replace_from_json(&bytes);
        }

        /// The registry cache reads a fetched document in its own way (only what routing
        /// needs, keeping each instance's text); it must agree with the model on every
        /// document, also on instances whose keys the generator mixed into a routable one.
        #[test]
        fn the_cache_reads_a_document_as_the_model_does(value in json_value()) {
            let mut routable = serde_json::json!({"instanceId": "i-1", "hostName": "10.0.0.1",
                "app": "x", "ipAddr": "10.0.0.1", "port": {"$": 8080, "@enabled": "true"}});
            if let (Some(base), Some(extra)) = (routable.as_object_mut(), value.as_object()) {
                base.extend(extra.clone());
            }
            let document = serde_json::json!({"applications": {"application": [
                {"name": "x", "instance": [value, routable]},
                {"name": "y", "instance": value},
            ]}})
            .to_string();
            let from_json = RegistryCache::new();
            let read = from_json.replace_from_json(document.as_bytes());
            let from_model = RegistryCache::new();
            match Applications::from_json(document.as_bytes()) {
                Ok(apps) => {
                    prop_assert!(read.is_ok(), "{read:?}");
                    from_model.replace(apps);
                    prop_assert_eq!(from_json.instance_count(), from_model.instance_count());
                    prop_assert_eq!(from_json.hash_code(), from_model.hash_code());
                    for service in ["x", "y"] {
                        let urls = |cache: &RegistryCache| {
                            let mut urls: Vec<String> = cache
                                .instances(service)
                                .unwrap_or_default()
                                .iter()
                                .map(|i| format!("{} {} {:?}", i.instance_id(), i.base_url(), i.metadata()))
                                .collect();
                            urls.sort();
                            urls
                        };
                        prop_assert_eq!(urls(&from_json), urls(&from_model));
                    }
                    // A second read of the same document takes every instance over unchanged.
                    from_json.replace_from_json(document.as_bytes()).expect("read again");
                    prop_assert_eq!(from_json.hash_code(), from_model.hash_code());
                }
                Err(_) => prop_assert!(read.is_err()),
            }
        }

    }

    /// The share of cases whose document must really hold an instance (about 46% do: the
    /// model reads most objects as one), so that the round trip cannot pass on documents that
    /// all fail to parse or hold nothing: one in five.
    const MIN_WITH_INSTANCES_PER: u32 = 5;

    #[test]
    fn what_the_model_writes_it_reads_back() {
        let with_instances = AtomicU32::new(0);
        let cases = proptest_cases(500);
        let mut runner = TestRunner::new(ProptestConfig::with_cases(cases));
        runner
            .run(&json_value(), |value| {
                let wrapped = serde_json::json!({"applications": {"application": [{"name": "x", "instance": [value]}]}});
                if let Ok(apps) = Applications::from_json(wrapped.to_string().as_bytes()) {
                    if apps.instance_count() > 0 {
                        with_instances.fetch_add(1, Ordering::Relaxed);
                    }
                    let again = Applications::from_json(apps.to_json().as_bytes())
                        .expect("own output parses");
                    prop_assert_eq!(again.instance_count(), apps.instance_count());
                    prop_assert_eq!(again.to_json(), apps.to_json());
                }
                Ok(())
            })
            .unwrap();
        let with_instances = with_instances.into_inner();
        assert!(
            with_instances >= cases / MIN_WITH_INSTANCES_PER,
            "only {with_instances} of {cases} documents held an instance"
        );
    }
}
