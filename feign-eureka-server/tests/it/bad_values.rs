//! Registrations whose values the wire model would read tolerantly are refused with 400 and a
//! reason instead: keys given twice, ports that are negative, above 65535 or not numbers,
//! statuses that are not Eureka's, lease durations and timestamps that are not whole numbers.
//! A `lastDirtyTimestamp` ahead of the registry's clock is taken, as Eureka takes it, but a copy
//! written with one beyond the clock-skew bound holds against earlier ones for that long only.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::support::{call, dev, get_json, http, instance, post_raw, register, start};

fn now_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(since.as_millis()).unwrap()
}

/// Registers `body` for app `A` and returns the status and the response body.
async fn register_text(base: &str, body: &Value) -> (u16, String) {
    post_raw(base, "apps/A", body.to_string().into_bytes()).await
}

#[tokio::test]
async fn ports_and_statuses_eureka_cannot_hold_get_400_with_a_reason() {
    let server = start().await;
    let base = server.url();
    let cases: [(&str, Value, &str); 8] = [
        ("port", json!({"$": -1, "@enabled": "true"}), "port -1"),
        (
            "port",
            json!({"$": 65536, "@enabled": "true"}),
            "port 65536",
        ),
        (
            "port",
            json!({"$": "http", "@enabled": "true"}),
            "port http is not a number",
        ),
        ("port", json!(8080.5), "port 8080.5"),
        (
            "securePort",
            json!({"$": 70000, "@enabled": "false"}),
            "securePort 70000",
        ),
        ("status", json!("RUNNING"), "RUNNING"),
        ("status", json!("up"), "\"up\""),
        ("overriddenStatus", json!(3), "overriddenStatus 3"),
    ];
    for (field, value, reason) in cases {
        let mut body = instance("A", "a-1", 8080, "UP", now_ms());
        body["instance"][field] = value.clone();
        let (status, text) = register_text(base, &body).await;
        assert_eq!(status, 400, "{field} = {value}: {text}");
        assert!(text.contains(reason), "{field} = {value}: {text}");
    }
    assert_eq!(server.instance_count(), 0, "nothing was stored");

    // What Eureka clients do send is still taken: ports as numbers or numeric strings, 0 to
    // 65535, and every status name.
    let mut body = instance("A", "a-1", 8080, "STARTING", now_ms());
    body["instance"]["port"] = json!({"$": "65535", "@enabled": "true"});
    body["instance"]["securePort"] = json!({"$": 0, "@enabled": "false"});
    assert_eq!(register(base, "A", &body).await, 204);
    server.shutdown().await;
}

/// A registration's JSON with `extra` (raw JSON, `"key":value` pairs) added at the end of
/// its instance, where the wire model reads the last of two equal keys.
fn with_extra(extra: &str) -> String {
    let body = instance("A", "a-1", 8080, "UP", now_ms()).to_string();
    let open = body.strip_suffix("}}").expect("an instance object");
    format!("{open},{extra}}}}}")
}

#[tokio::test]
async fn keys_given_twice_and_values_out_of_range_get_400_naming_them() {
    let server = start().await;
    let base = server.url();
    let cases = [
        (
            r#""port":{"$":-1,"@enabled":"true"}"#,
            "\"port\" is given more than once",
        ),
        (r#""status":"HACKED""#, "\"status\" is given more than once"),
        (
            r#""securePort":99999"#,
            "\"securePort\" is given more than once",
        ),
        (
            r#""metadata":{"a":"1","a":"2"}"#,
            "\"metadata\" is given more than once",
        ),
        (r#""overriddenstatus":"HACKED""#, "HACKED"),
    ];
    for (extra, reason) in cases {
        let (status, text) = post_raw(base, "apps/A", with_extra(extra).into_bytes()).await;
        assert_eq!(status, 400, "{extra}: {text}");
        assert!(text.contains(reason), "{extra}: {text}");
    }
    let out_of_range = [
        (
            "leaseInfo",
            json!({"durationInSecs": -5}),
            "durationInSecs -5",
        ),
        (
            "leaseInfo",
            json!({"renewalIntervalInSecs": 4_294_967_296u64}),
            "renewalIntervalInSecs 4294967296",
        ),
        (
            "lastUpdatedTimestamp",
            json!("-1"),
            "lastUpdatedTimestamp \"-1\"",
        ),
        ("lastDirtyTimestamp", json!(1.5), "lastDirtyTimestamp 1.5"),
    ];
    for (field, value, reason) in out_of_range {
        let mut body = instance("A", "a-1", 8080, "UP", now_ms());
        body["instance"][field] = value.clone();
        let (status, text) = register_text(base, &body).await;
        assert_eq!(status, 400, "{field} = {value}: {text}");
        assert!(text.contains(reason), "{field} = {value}: {text}");
    }
    // Twice inside a nested object, and with the duplicate first.
    let mut body = instance("A", "a-1", 8080, "UP", now_ms()).to_string();
    body = body.replacen(r#""port":{"#, r#""port":{"$":-1,"#, 1);
    let (status, text) = post_raw(base, "apps/A", body.into_bytes()).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("\"$\" is given more than once"), "{text}");
    assert_eq!(server.instance_count(), 0, "nothing was stored");
    server.shutdown().await;
}

#[tokio::test]
async fn xml_elements_given_twice_get_400_naming_them() {
    let server = start().await;
    let base = server.url();
    let registration = |inner: &str| {
        format!(
            "<instance><instanceId>a-1</instanceId><hostName>h</hostName><app>A</app>\
             <ipAddr>127.0.0.1</ipAddr><status>UP</status>\
             <dataCenterInfo class=\"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo\">\
             <name>MyOwn</name></dataCenterInfo>{inner}</instance>"
        )
    };
    for (inner, reason) in [
        ("<port>8080</port><port>-1</port>", "port"),
        ("<status>UP</status>", "status"),
        ("<metadata><a>1</a><a>2</a></metadata>", "metadata"),
    ] {
        let response = http()
            .post(format!("{base}apps/A"))
            .header("Content-Type", "application/xml")
            .body(registration(inner))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        assert_eq!(status, 400, "{inner}: {text}");
        assert!(text.contains(&format!("<{reason}>")), "{inner}: {text}");
    }
    let response = http()
        .post(format!("{base}apps/A"))
        .header("Content-Type", "application/xml")
        .body(registration(
            "<port>8080</port><metadata><a>1</a><b>2</b></metadata>",
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204, "each element once is taken");
    server.shutdown().await;
}

/// A client whose clock runs ten minutes fast registers and renews, as on Eureka (the
/// interop differential test pins the real server's answers to the same requests).
#[tokio::test]
async fn a_client_whose_clock_runs_ahead_registers_and_renews() {
    let server = start().await;
    let base = server.url();
    let ahead = now_ms() + 10 * 60 * 1000;
    let (status, text) = register_text(base, &instance("A", "a-1", 8080, "UP", ahead)).await;
    assert_eq!(status, 204, "{text}");
    let path = format!("apps/A/a-1?status=UP&lastDirtyTimestamp={ahead}");
    let (status, text) = call(reqwest::Method::PUT, base, &path).await;
    assert_eq!(status, 200, "{text}");
    let stored = get_json(base, "apps/A/a-1").await;
    assert_eq!(
        stored["instance"]["lastDirtyTimestamp"],
        ahead.to_string(),
        "the client's own timestamp is kept"
    );
    server.shutdown().await;
}

/// A registration with a forged future `lastDirtyTimestamp` holds against the instance's
/// honest registrations (with earlier timestamps) for the clock-skew bound only.
#[tokio::test]
async fn a_forged_future_timestamp_holds_a_record_for_the_skew_only() {
    let server = dev()
        .max_clock_skew(Duration::from_secs(1))
        .start()
        .await
        .unwrap();
    let base = server.url();
    let forged = now_ms() + 24 * 3600 * 1000;
    let port = |doc: &Value| doc["instance"]["port"]["$"].as_u64();
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 6666, "UP", forged)).await,
        204
    );
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 8080, "UP", now_ms())).await,
        204
    );
    let held = get_json(base, "apps/A/a-1").await;
    assert_eq!(
        port(&held),
        Some(6666),
        "Eureka keeps the later copy: {held}"
    );
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(
        register(base, "A", &instance("A", "a-1", 8080, "UP", now_ms())).await,
        204
    );
    let taken = get_json(base, "apps/A/a-1").await;
    assert_eq!(
        port(&taken),
        Some(8080),
        "the forged copy still pins: {taken}"
    );
    server.shutdown().await;
}

/// Posts a valid registration with `content_type` (none when `None`); returns the status.
async fn register_as(base: &str, content_type: Option<&str>) -> u16 {
    let mut request = http()
        .post(format!("{base}apps/A"))
        .body(instance("A", "a-1", 8080, "UP", now_ms()).to_string());
    if let Some(content_type) = content_type {
        request = request.header("Content-Type", content_type);
    }
    request.send().await.unwrap().status().as_u16()
}

/// The media type is parsed, as the real server's reader does: the same answers as a Spring
/// Cloud Netflix Eureka server gives (a JSON body declared XML does not parse as XML: 400).
#[tokio::test]
async fn the_registration_media_type_is_parsed_not_searched() {
    let server = start().await;
    let base = server.url();
    let answers = [
        (None, 415),
        (Some("application/json"), 204),
        (Some("application/json; charset=utf-8"), 204),
        (Some("APPLICATION/JSON"), 204),
        (Some("application/vnd.foo+json; note=notxml"), 415),
        (Some("text/plain"), 415),
        (Some("text/json"), 415),
        (Some("application/xml"), 400),
        (Some("application/json; charset=utf-16"), 415),
    ];
    for (content_type, expected) in answers {
        assert_eq!(
            register_as(base, content_type).await,
            expected,
            "{content_type:?}"
        );
    }
    server.shutdown().await;
}
