//! Abuse of the embedded registry (case C8): oversized bodies, metadata floods, hostile names,
//! absurd lease durations, registration floods, markup in instance data, and arbitrary
//! requests, none of which may crash it or be accepted silently.

use crate::support::{call, dev, get_json, http, instance, post_raw, register, start};
use feign_test_support::proptest_cases;
use proptest::prelude::*;
use reqwest::Method;
use serde_json::Value;

const LDT: u64 = 1_732_881_099_990;

#[tokio::test]
async fn a_ten_mebibyte_body_is_refused_with_413() {
    let server = start().await;
    let mut body = instance("A", "a-1", 1, "UP", LDT);
    body["instance"]["homePageUrl"] = Value::String("x".repeat(10 * 1024 * 1024));
    let (status, reason) = post_raw(server.url(), "apps/A", body.to_string().into_bytes()).await;
    assert_eq!(status, 413);
    assert!(reason.contains("larger than 1048576 bytes"), "{reason}");
    assert_eq!(server.instance_count(), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn ten_thousand_metadata_keys_are_refused() {
    let server = start().await;
    let mut body = instance("A", "a-1", 1, "UP", LDT);
    let metadata: serde_json::Map<String, Value> = (0..10_000)
        .map(|i| (format!("k{i}"), Value::String("v".into())))
        .collect();
    body["instance"]["metadata"] = Value::Object(metadata);
    let (status, reason) = post_raw(server.url(), "apps/A", body.to_string().into_bytes()).await;
    assert_eq!(status, 400);
    assert!(reason.contains("metadata entries"), "{reason}");
    assert_eq!(server.instance_count(), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn hostile_application_names_are_refused() {
    let server = start().await;
    let long = "A".repeat(10 * 1024);
    for (path_app, body_app) in [
        ("..%2Fx", "../x"),
        ("a%2Fb", "a/b"),
        (long.as_str(), long.as_str()),
    ] {
        let body = instance(body_app, "a-1", 1, "UP", LDT);
        let (status, reason) = post_raw(
            server.url(),
            &format!("apps/{path_app}"),
            body.to_string().into_bytes(),
        )
        .await;
        assert_eq!(status, 400, "{body_app:.20}");
        assert!(reason.contains("application name"), "{reason}");
    }
    let body = instance("A", "a/../b", 1, "UP", LDT);
    let (status, reason) = post_raw(server.url(), "apps/A", body.to_string().into_bytes()).await;
    assert_eq!(status, 400);
    assert!(reason.contains("instance id"), "{reason}");
    assert_eq!(server.instance_count(), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn eurekas_register_validation_answers_400_with_its_reasons() {
    let server = start().await;
    let base = server.url();
    let cases: Vec<(Value, &str)> = vec![
        (serde_json::json!({"hostName": "h"}), "cannot parse"),
        (
            {
                let mut b = instance("A", "a-1", 1, "UP", LDT);
                b["instance"]["ipAddr"] = Value::String(String::new());
                b
            },
            "Missing ip address",
        ),
        (
            instance("B", "a-1", 1, "UP", LDT),
            "Mismatched appName, expecting A but was B",
        ),
        (
            {
                let mut b = instance("A", "a-1", 1, "UP", LDT);
                b["instance"]
                    .as_object_mut()
                    .unwrap()
                    .remove("dataCenterInfo");
                b
            },
            "Missing dataCenterInfo",
        ),
    ];
    for (body, expected) in cases {
        let (status, reason) = post_raw(base, "apps/A", body.to_string().into_bytes()).await;
        assert_eq!(status, 400, "{expected}");
        assert!(reason.contains(expected), "{reason} vs {expected}");
    }
    let (status, reason) = post_raw(base, "apps/A", b"{\"instance\":".to_vec()).await;
    assert_eq!(
        (status, reason.contains("cannot parse request body")),
        (400, true)
    );
    assert_eq!(server.instance_count(), 0);
    server.shutdown().await;
}

#[tokio::test]
async fn lease_durations_are_clamped() {
    let server = start().await;
    let base = server.url();
    for (id, duration, expected) in [("zero", 0u64, 90u64), ("huge", 1_000_000_000, 3600)] {
        let mut body = instance("A", id, 1, "UP", LDT);
        body["instance"]["leaseInfo"] =
            serde_json::json!({"renewalIntervalInSecs": duration, "durationInSecs": duration});
        assert_eq!(register(base, "A", &body).await, 204);
        let doc = get_json(base, &format!("apps/A/{id}")).await;
        assert_eq!(
            doc["instance"]["leaseInfo"]["durationInSecs"], expected,
            "{id}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_registration_flood_gets_429_with_retry_after() {
    let server = dev()
        .registration_rate_limit(Some((20, 10)))
        .start()
        .await
        .unwrap();
    let base = server.url();
    let mut refused = None;
    for i in 0..1_000 {
        let body = instance("A", &format!("a-{i}"), 1, "UP", LDT);
        let response = http()
            .post(format!("{base}apps/A"))
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        if response.status() == 429 {
            refused = Some((
                i,
                response.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .to_owned(),
            ));
            break;
        }
        assert_eq!(response.status(), 204);
    }
    let (at, retry_after) = refused.expect("the flood is limited");
    assert!((20..40).contains(&at), "refused at {at}");
    assert!(retry_after.parse::<u64>().unwrap() >= 1);
    // Heartbeats are never limited.
    for _ in 0..100 {
        assert_eq!(call(Method::PUT, base, "apps/A/a-0").await.0, 200);
    }
    server.shutdown().await;
}

/// A registration of `count` distinct empty elements in XML (`<e0/><e1/>...` inside the
/// instance): about 6 bytes an element.
fn xml_of_distinct_elements(count: usize) -> String {
    let elements: String = (0..count).map(|i| format!("<e{i}/>")).collect();
    format!("<instance><hostName>h</hostName>{elements}</instance>")
}

async fn post_xml(base: &str, body: String) -> (u16, String) {
    let response = http()
        .post(format!("{base}apps/A"))
        .header("Content-Type", "application/xml")
        .timeout(std::time::Duration::from_secs(10))
        .body(body)
        .send()
        .await
        .expect("answered within 10 s");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// A 1 MB XML registration of 100,000 distinct elements is refused at once, naming the limit
/// (read whole, such a body cost tens of seconds of CPU).
#[tokio::test]
async fn an_xml_registration_of_100000_elements_is_refused_at_once() {
    let server = start().await;
    let (status, reason) = post_xml(server.url(), xml_of_distinct_elements(100_000)).await;
    assert_eq!(status, 413, "{reason}");
    assert!(reason.contains("more than 384 XML elements"), "{reason}");
    assert_eq!(server.instance_count(), 0);
    server.shutdown().await;
}

/// Two large XML registrations at once leave the registry answering others: an unrelated read
/// is answered while they are read (they once held both runtime workers for minutes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_xml_registrations_leave_the_registry_answering() {
    let server = start().await;
    let base = server.url().to_owned();
    let posts: Vec<_> = (0..2)
        .map(|_| {
            let base = base.clone();
            tokio::spawn(async move { post_xml(&base, xml_of_distinct_elements(60_000)).await })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        call(Method::GET, &base, "apps/"),
    )
    .await
    .expect("a read answered within 2 s");
    assert_eq!(read.0, 200);
    for post in posts {
        assert_eq!(post.await.unwrap().0, 413);
    }
    server.shutdown().await;
}

#[tokio::test]
async fn the_dashboard_escapes_instance_data() {
    let server = start().await;
    let mut body = instance("A", "a-1", 1, "UP", LDT);
    body["instance"]["metadata"] =
        serde_json::json!({"<script>x</script>": "\"><img src=x onerror=alert(1)>"});
    body["instance"]["hostName"] = Value::String("<b>host</b>".into());
    assert_eq!(register(server.url(), "A", &body).await, 204);
    let response = http().get(server.dashboard_url()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let csp = response.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    let html = response.text().await.unwrap();
    assert!(!html.contains("<script>x"), "raw markup leaked");
    assert!(!html.contains("<img"), "raw markup leaked");
    assert!(!html.contains("<b>host"), "raw markup leaked");
    assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"));
    assert!(html.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
    server.shutdown().await;
}

fn arbitrary_request() -> impl Strategy<Value = (&'static str, String, String, Vec<u8>)> {
    let method = prop::sample::select(vec!["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"]);
    let segment = prop_oneof![
        Just("apps".to_owned()),
        Just("delta".to_owned()),
        Just("status".to_owned()),
        Just("metadata".to_owned()),
        Just("A".to_owned()),
        Just("a-1".to_owned()),
        Just("%2F".to_owned()),
        Just("%FF".to_owned()),
        Just("..".to_owned()),
        "[a-zA-Z0-9%._~:-]{0,12}",
    ];
    let path = prop::collection::vec(segment, 0..5).prop_map(|s| s.join("/"));
    let query = prop_oneof![
        Just(String::new()),
        Just("?status=UP&lastDirtyTimestamp=1".to_owned()),
        Just("?lastDirtyTimestamp=-1&value=UP".to_owned()),
        Just("?value=NOPE&lastDirtyTimestamp=99999999999999999999999".to_owned()),
        "\\?[a-zA-Z=&%0-9]{0,20}",
    ];
    let body = prop_oneof![
        Just(Vec::new()),
        Just(instance("A", "a-1", 1, "UP", LDT).to_string().into_bytes()),
        Just(br#"{"instance":{"port":{"$":"x","@enabled":7},"metadata":[1,{}],"leaseInfo":"x"}}"#.to_vec()),
        Just(br#"{"replicationList":[{"appName":"A","id":"a-1","action":"Heartbeat","lastDirtyTimestamp":1}]}"#.to_vec()),
        Just(br#"{"replicationList":[{"appName":"../A","id":"","action":"Register","instanceInfo":{}}]}"#.to_vec()),
        prop::collection::vec(any::<u8>(), 0..64),
        "\\PC{0,64}".prop_map(String::into_bytes),
    ];
    (method, path, query, body)
}

#[test]
fn no_request_makes_the_registry_fail() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(start());
    let base = server.url().to_owned();
    let client = http();
    let config = ProptestConfig {
        cases: proptest_cases(256),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |((method, path, query, body) in arbitrary_request())| {
        let url = format!("{base}{path}{query}");
        let Ok(url) = reqwest::Url::parse(&url) else { return Ok(()); };
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let status = runtime.block_on(async {
            client
                .request(method, url)
                .header("Content-Type", "application/json")
                .body(body)
                .send()
                .await
                .map(|r| r.status().as_u16())
        });
        let status = status.map_err(|e| TestCaseError::fail(format!("no response: {e}")))?;
        prop_assert!(status < 500, "server error {status}");
    });
    // The registry still works afterwards.
    runtime.block_on(async {
        let doc = get_json(&base, "apps/").await;
        assert!(doc["applications"]["application"].is_array());
        server.shutdown().await;
    });
}
