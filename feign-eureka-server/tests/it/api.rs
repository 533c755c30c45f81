//! The embedded registry's REST API against Eureka's contract: endpoints under both prefixes,
//! the exact JSON shape, status codes, override and `lastDirtyTimestamp` rules, deltas, gzip.

use std::io::Read;

use crate::support::{call, get_json, http, instance, instances, register, start};
use feign_test_support::eureka::INSTANCE_KEYS;
use reqwest::Method;
use serde_json::Value;

const LDT: u64 = 1_732_881_099_990;

#[tokio::test]
async fn a_registration_is_listed_with_eurekas_exact_field_set() {
    let server = start().await;
    let base = server.url();
    let body = instance("RUST-SVC", "10.0.0.5:rust-svc:9000", 9000, "UP", LDT);
    let response = http()
        .post(format!("{base}apps/RUST-SVC"))
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert!(response.bytes().await.unwrap().is_empty());

    for path in ["apps", "apps/", "v2/apps", "v2/apps/"] {
        let response = http()
            .get(format!("{base}{path}"))
            .header("Accept", "application/json")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["content-type"], "application/json");
        let doc: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        let apps = &doc["applications"];
        assert_eq!(apps["versions__delta"], "1");
        assert_eq!(apps["apps__hashcode"], "UP_1_");
        let keys: Vec<&str> = apps
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 3, "{keys:?}");
        let app = &apps["application"][0];
        assert_eq!(app["name"], "RUST-SVC");
        assert_eq!(app.as_object().unwrap().len(), 2);
        let inst = &app["instance"][0];
        let mut keys: Vec<&str> = inst
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut expected = INSTANCE_KEYS.to_vec();
        expected.push("actionType");
        expected.sort_unstable();
        assert_eq!(keys, expected);
        assert_eq!(
            inst["port"],
            serde_json::json!({"$": 9000, "@enabled": "true"})
        );
        assert_eq!(inst["lastDirtyTimestamp"], LDT.to_string());
        assert_eq!(inst["isCoordinatingDiscoveryServer"], "false");
        assert_eq!(inst["actionType"], "ADDED");
        assert_eq!(
            inst["dataCenterInfo"]["@class"],
            "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo"
        );
        let lease = inst["leaseInfo"].as_object().unwrap();
        assert_eq!(lease["durationInSecs"], 90);
        assert!(lease["registrationTimestamp"].as_u64().unwrap() > 0);
        assert_eq!(lease.len(), 6);
    }
    server.shutdown().await;
}

#[tokio::test]
async fn an_empty_registry_and_empty_metadata_have_eurekas_markers() {
    let server = start().await;
    let base = server.url();
    let (status, body) = call(Method::GET, base, "apps").await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        r#"{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}"#
    );
    let mut body = instance("A", "a-1", 1, "UP", LDT);
    body["instance"]["metadata"] = serde_json::json!({});
    assert_eq!(register(base, "A", &body).await, 204);
    let doc = get_json(base, "apps/A/a-1").await;
    assert_eq!(
        doc["instance"]["metadata"],
        serde_json::json!({"@class": "java.util.Collections$EmptyMap"})
    );
    server.shutdown().await;
}

#[tokio::test]
async fn single_app_instance_and_vip_lookups() {
    let server = start().await;
    let base = server.url();
    assert_eq!(
        register(base, "orders", &instance("ORDERS", "o-1", 1, "UP", LDT)).await,
        204
    );
    let app = get_json(base, "apps/orders").await;
    assert_eq!(app["application"]["name"], "ORDERS");
    assert_eq!(app["application"]["instance"].as_array().unwrap().len(), 1);
    assert_eq!(
        get_json(base, "apps/ORDERS/o-1").await["instance"]["instanceId"],
        "o-1"
    );
    assert_eq!(
        get_json(base, "instances/o-1").await["instance"]["app"],
        "ORDERS"
    );
    assert_eq!(instances(&get_json(base, "vips/orders").await).len(), 1);
    assert_eq!(instances(&get_json(base, "svips/orders").await).len(), 1);
    // VIP matching is exact and case-sensitive, and an empty result is still 200.
    let none = get_json(base, "vips/ORDERS").await;
    assert_eq!(instances(&none).len(), 0);
    assert_eq!(none["applications"]["apps__hashcode"], "");
    // As the real server writes it on the VIP endpoints.
    for vip in ["vips/orders", "svips/orders", "vips/ORDERS"] {
        let doc = get_json(base, vip).await;
        assert_eq!(doc["applications"]["versions__delta"], "-1", "{vip}");
    }
    assert_eq!(call(Method::GET, base, "apps/NOPE").await.0, 404);
    assert_eq!(call(Method::GET, base, "apps/ORDERS/nope").await.0, 404);
    assert_eq!(call(Method::GET, base, "instances/nope").await.0, 404);
    assert_eq!(call(Method::PATCH, base, "apps/ORDERS").await.0, 405);
    assert_eq!(call(Method::GET, base, "nothing-here").await.0, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn renew_answers_404_by_eurekas_rules() {
    let server = start().await;
    let base = server.url();
    let renew = |ldt: u64| format!("apps/A/a-1?status=UP&lastDirtyTimestamp={ldt}");
    assert_eq!(
        call(Method::PUT, base, &renew(LDT)).await.0,
        404,
        "unknown lease"
    );
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", LDT)).await,
        204
    );
    assert_eq!(
        call(Method::PUT, base, &renew(LDT)).await,
        (200, String::new())
    );
    assert_eq!(
        call(Method::PUT, base, "apps/A/a-1").await.0,
        200,
        "no timestamp"
    );
    assert_eq!(
        call(Method::PUT, base, &renew(LDT + 1)).await.0,
        404,
        "client is newer"
    );
    assert_eq!(
        call(Method::PUT, base, &renew(LDT - 1)).await.0,
        200,
        "client is older"
    );
    let (status, reason) = call(Method::PUT, base, "apps/A/a-1?lastDirtyTimestamp=soon").await;
    assert_eq!(status, 400);
    assert!(reason.contains("lastDirtyTimestamp"), "{reason}");
    // An instance whose status is UNKNOWN must re-register.
    assert_eq!(
        register(base, "B", &instance("B", "b-1", 1, "UNKNOWN", LDT)).await,
        204
    );
    assert_eq!(call(Method::PUT, base, "apps/B/b-1").await.0, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn cancel_removes_and_the_delta_reports_it() {
    let server = start().await;
    let base = server.url();
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", LDT)).await,
        204
    );
    assert_eq!(
        register(base, "A", &instance("A", "a-2", 2, "UP", LDT)).await,
        204
    );
    assert_eq!(
        call(Method::DELETE, base, "apps/A/a-1").await,
        (200, String::new())
    );
    assert_eq!(call(Method::DELETE, base, "apps/A/a-1").await.0, 404);
    let full = get_json(base, "apps/").await;
    assert_eq!(instances(&full).len(), 1);
    let delta = get_json(base, "apps/delta").await;
    let changed = instances(&delta);
    let action = |id: &str| {
        changed
            .iter()
            .find(|i| i["instanceId"] == id)
            .map(|i| i["actionType"].clone())
    };
    assert_eq!(action("a-1"), Some("DELETED".into()));
    assert_eq!(action("a-2"), Some("ADDED".into()));
    assert_eq!(delta["applications"]["apps__hashcode"], "UP_1_");
    let deleted = changed.iter().find(|i| i["instanceId"] == "a-1").unwrap();
    assert!(deleted["leaseInfo"]["evictionTimestamp"].as_u64().unwrap() > 0);
    let first: u64 = delta["applications"]["versions__delta"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        register(base, "A", &instance("A", "a-3", 3, "DOWN", LDT)).await,
        204
    );
    let next = get_json(base, "apps/delta").await;
    let second: u64 = next["applications"]["versions__delta"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(second > first);
    assert_eq!(next["applications"]["apps__hashcode"], "DOWN_1_UP_1_");
    server.shutdown().await;
}

#[tokio::test]
async fn status_overrides_follow_eurekas_rules() {
    let server = start().await;
    let base = server.url();
    let status_of = |doc: &Value| doc["instance"]["status"].as_str().unwrap().to_owned();
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", LDT)).await,
        204
    );
    // A registered instance cannot take itself out of service by re-registering...
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "OUT_OF_SERVICE", LDT)).await,
        204
    );
    assert_eq!(status_of(&get_json(base, "apps/A/a-1").await), "UP");
    // ...but can go DOWN and come back UP.
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "DOWN", LDT)).await,
        204
    );
    assert_eq!(status_of(&get_json(base, "apps/A/a-1").await), "DOWN");
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", LDT)).await,
        204
    );
    assert_eq!(status_of(&get_json(base, "apps/A/a-1").await), "UP");

    let set = "apps/A/a-1/status?value=OUT_OF_SERVICE&lastDirtyTimestamp=1732881100000";
    assert_eq!(call(Method::PUT, base, set).await, (200, String::new()));
    let doc = get_json(base, "apps/A/a-1").await;
    assert_eq!(status_of(&doc), "OUT_OF_SERVICE");
    assert_eq!(doc["instance"]["overriddenStatus"], "OUT_OF_SERVICE");
    assert_eq!(doc["instance"]["actionType"], "MODIFIED");
    assert_eq!(doc["instance"]["lastDirtyTimestamp"], "1732881100000");
    // The admin override wins over the client's registration.
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", 1_732_881_100_000)).await,
        204
    );
    assert_eq!(
        status_of(&get_json(base, "apps/A/a-1").await),
        "OUT_OF_SERVICE"
    );
    let delta = get_json(base, "apps/delta").await;
    assert_eq!(delta["applications"]["apps__hashcode"], "OUT_OF_SERVICE_1_");

    assert_eq!(
        call(Method::PUT, base, "apps/A/a-1/status?value=up")
            .await
            .0,
        400
    );
    assert_eq!(call(Method::PUT, base, "apps/A/a-1/status").await.0, 400);
    assert_eq!(
        call(Method::PUT, base, "apps/A/nope/status?value=UP")
            .await
            .0,
        404
    );
    // Removing the override without a value leaves UNKNOWN: the next heartbeat asks the
    // client to re-register.
    assert_eq!(call(Method::DELETE, base, "apps/A/a-1/status").await.0, 200);
    let doc = get_json(base, "apps/A/a-1").await;
    assert_eq!(status_of(&doc), "UNKNOWN");
    assert_eq!(doc["instance"]["overriddenStatus"], "UNKNOWN");
    assert_eq!(call(Method::PUT, base, "apps/A/a-1").await.0, 404);
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", 1_732_881_200_000)).await,
        204
    );
    assert_eq!(status_of(&get_json(base, "apps/A/a-1").await), "UP");
    server.shutdown().await;
}

#[tokio::test]
async fn an_older_registration_does_not_overwrite_newer_data() {
    let server = start().await;
    let base = server.url();
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", LDT)).await,
        204
    );
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 2, "UP", LDT - 5)).await,
        204
    );
    let doc = get_json(base, "apps/A/a-1").await;
    assert_eq!(doc["instance"]["port"]["$"], 1);
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 3, "UP", LDT)).await,
        204
    );
    assert_eq!(
        get_json(base, "apps/A/a-1").await["instance"]["port"]["$"],
        3
    );
    server.shutdown().await;
}

#[tokio::test]
async fn metadata_updates_merge_into_the_stored_instance() {
    let server = start().await;
    let base = server.url();
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", LDT)).await,
        204
    );
    let (status, _) = call(
        Method::PUT,
        base,
        "apps/A/a-1/metadata?version=2&zone=zone-b",
    )
    .await;
    assert_eq!(status, 200);
    let doc = get_json(base, "apps/A/a-1").await;
    assert_eq!(
        doc["instance"]["metadata"],
        serde_json::json!({"version": "2", "zone": "zone-b"})
    );
    assert_eq!(
        call(Method::PUT, base, "apps/A/nope/metadata?x=1").await.0,
        404
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_registry_and_delta_are_gzipped_when_asked() {
    let server = start().await;
    let base = server.url();
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", LDT)).await,
        204
    );
    for path in ["apps/", "apps/delta"] {
        let response = http()
            .get(format!("{base}{path}"))
            .header("Accept", "application/json")
            .header("Accept-Encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-encoding"], "gzip", "{path}");
        let compressed = response.bytes().await.unwrap();
        let mut json = String::new();
        flate2::read::GzDecoder::new(&compressed[..])
            .read_to_string(&mut json)
            .unwrap();
        let doc: Value = serde_json::from_str(&json).unwrap();
        assert!(doc.is_object(), "{path}");
    }
    // As Eureka: the other documents are never compressed.
    for path in ["apps/A", "apps/A/a-1", "vips/a"] {
        let response = http()
            .get(format!("{base}{path}"))
            .header("Accept", "application/json")
            .header("Accept-Encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert!(
            response.headers().get("content-encoding").is_none(),
            "{path}"
        );
    }
    let plain = http().get(format!("{base}apps/")).send().await.unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    server.shutdown().await;
}

#[tokio::test]
async fn the_read_only_cache_serves_the_last_refresh_until_the_next() {
    let server = crate::support::dev()
        .read_only_cache(true)
        .response_cache_update_interval(std::time::Duration::from_millis(300))
        .start()
        .await
        .unwrap();
    let base = server.url();
    assert_eq!(instances(&get_json(base, "apps/").await).len(), 0);
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", LDT)).await,
        204
    );
    // Instance reads are not cached; the full listing is, until the refresh.
    assert_eq!(call(Method::GET, base, "apps/A/a-1").await.0, 200);
    assert_eq!(instances(&get_json(base, "apps/").await).len(), 0);
    let mut seen = 0;
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        seen = instances(&get_json(base, "apps/").await).len();
        if seen == 1 {
            break;
        }
    }
    assert_eq!(seen, 1, "the refresh timer publishes the change");
    server.shutdown().await;
}

/// `development()` is the CLI's `--dev` on the builder: the full listing, read once (so a read-only
/// cache would hold it), shows a registration made after it at once, and self-preservation is off.
#[tokio::test]
async fn the_development_preset_shows_a_registration_at_once() {
    let server = feign_eureka_server::EurekaServer::builder()
        .development()
        .bind("127.0.0.1:0")
        .start()
        .await
        .unwrap();
    let base = server.url();
    assert_eq!(instances(&get_json(base, "apps/").await).len(), 0);
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 1, "UP", LDT)).await,
        204
    );
    assert_eq!(instances(&get_json(base, "apps/").await).len(), 1);
    let dashboard = http().get(server.dashboard_url()).send().await.unwrap();
    let page = dashboard.text().await.unwrap();
    assert!(page.contains("Self-preservation is off"), "{page:.3000}");
    server.shutdown().await;
}

#[tokio::test]
async fn spring_metadata_instance_ids_are_adopted() {
    let server = start().await;
    let base = server.url();
    let mut body = instance("A", "", 1, "UP", LDT);
    body["instance"]
        .as_object_mut()
        .unwrap()
        .remove("instanceId");
    body["instance"]["metadata"] = serde_json::json!({"instanceId": "a:8080"});
    assert_eq!(register(base, "A", &body).await, 204);
    assert_eq!(
        call(Method::GET, base, "apps/A/127.0.0.1:a:8080").await.0,
        200
    );
    server.shutdown().await;
}

/// 404 and 405 carry Spring Boot's JSON error body, key for key as the real server writes it.
#[tokio::test]
async fn not_found_and_method_not_allowed_carry_springs_error_body() {
    let server = start().await;
    let base = server.url();
    for (method, path, status, error) in [
        (Method::GET, "apps/NOPE", 404, "Not Found"),
        (Method::PUT, "apps/NOPE/x-1", 404, "Not Found"),
        (Method::GET, "nothing", 404, "Not Found"),
        (Method::POST, "apps/NOPE/x-1", 405, "Method Not Allowed"),
    ] {
        let (got, body) = call(method.clone(), base, path).await;
        assert_eq!(got, status, "{method} {path}");
        let keys: Vec<&str> = body
            .trim_matches(['{', '}'])
            .split(',')
            .filter_map(|pair| pair.split(':').next())
            .collect();
        assert_eq!(
            keys,
            [r#""timestamp""#, r#""status""#, r#""error""#, r#""path""#],
            "{body}"
        );
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["status"], status);
        assert_eq!(doc["error"], error);
        assert_eq!(doc["path"], format!("/eureka/{path}"));
        let stamp = doc["timestamp"].as_str().unwrap();
        assert!(stamp.ends_with("+00:00") && stamp.len() == 29, "{stamp}");
    }
    server.shutdown().await;
}

/// Two applications may hold instances with the same id: an override set through one never
/// reaches the other's, neither while set, nor through its heartbeats, nor when removed.
#[tokio::test]
async fn status_overrides_are_kept_per_application_and_instance() {
    let server = start().await;
    let base = server.url();
    for app in ["A", "B"] {
        assert_eq!(
            register(base, app, &instance(app, "shared-1", 1, "UP", LDT)).await,
            204
        );
    }
    let status_of = |app: &'static str| async move {
        let doc = get_json(base, &format!("apps/{app}/shared-1")).await;
        let instance = &doc["instance"];
        (
            instance["status"].as_str().unwrap().to_owned(),
            instance["overriddenStatus"].as_str().unwrap().to_owned(),
        )
    };
    let (status, _) = call(
        Method::PUT,
        base,
        "apps/A/shared-1/status?value=OUT_OF_SERVICE",
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        status_of("A").await,
        ("OUT_OF_SERVICE".into(), "OUT_OF_SERVICE".into())
    );
    assert_eq!(status_of("B").await, ("UP".into(), "UNKNOWN".into()));
    // B's heartbeat and re-registration do not pick up A's override.
    assert_eq!(call(Method::PUT, base, "apps/B/shared-1").await.0, 200);
    assert_eq!(
        register(base, "B", &instance("B", "shared-1", 1, "UP", LDT)).await,
        204
    );
    assert_eq!(status_of("B").await, ("UP".into(), "UNKNOWN".into()));
    // Removing the override through B finds none there; A keeps its own.
    assert_eq!(
        call(Method::DELETE, base, "apps/B/shared-1/status").await.0,
        200
    );
    assert_eq!(status_of("A").await.1, "OUT_OF_SERVICE");
    // Cancelling B leaves A's override alone.
    assert_eq!(call(Method::DELETE, base, "apps/B/shared-1").await.0, 200);
    assert_eq!(
        register(base, "A", &instance("A", "shared-1", 1, "UP", LDT)).await,
        204
    );
    assert_eq!(status_of("A").await.1, "OUT_OF_SERVICE");
    server.shutdown().await;
}

/// 1,100 requests for VIPs no instance has, on a registry serving reads from its read-only
/// cache (as in production): answered, but none kept, so they neither fill the cache (1,024
/// documents, each rendered again every 30 s) nor keep a real VIP out of it.
#[tokio::test]
async fn vips_nobody_has_do_not_fill_the_response_cache() {
    let server = feign_eureka_server::EurekaServer::builder()
        .bind("127.0.0.1:0")
        .self_preservation(false)
        .start()
        .await
        .unwrap();
    let base = server.url();
    assert_eq!(
        register(base, "ORDERS", &instance("ORDERS", "o-1", 8080, "UP", 1)).await,
        204
    );
    for i in 0..1_100 {
        let (status, body) = call(reqwest::Method::GET, base, &format!("vips/junk{i}")).await;
        assert_eq!(status, 200, "{body}");
    }
    assert!(
        server.cached_documents() <= 1,
        "{} kept",
        server.cached_documents()
    );
    assert_eq!(call(reqwest::Method::GET, base, "vips/orders").await.0, 200);
    assert_eq!(server.cached_documents(), 1, "the real VIP is kept");
    server.shutdown().await;
}
