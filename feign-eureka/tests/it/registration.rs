//! Registration against a Eureka-speaking server on 127.0.0.1: the register body and headers,
//! heartbeat cadence, 404 re-registration, backoff, status changes, jitter, basic auth.

use std::time::Duration;

use feign_eureka::model::{InstanceInfo, InstanceStatus, PortInfo};
use feign_eureka::{EurekaClient, InstanceConfig};
use feign_test_support::eureka::{FakeEureka, Mode};
use tokio::time::{sleep as advance, Instant};

fn order_service() -> InstanceConfig {
    InstanceConfig::new("order-service", 8080)
        .host_name("orders.internal")
        .ip_address("10.0.0.5")
        .metadata("zone", "zone-a")
}

async fn client(server: &FakeEureka, instance: InstanceConfig) -> EurekaClient {
    EurekaClient::builder()
        .service_urls([server.url()])
        .instance(instance)
        .fetch_registry(false)
        .registration_jitter(Duration::ZERO)
        .start()
        .await
        .unwrap()
}

fn gaps(times: &[Instant]) -> Vec<f64> {
    times
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn registers_with_eurekas_exact_body_and_headers() {
    let server = FakeEureka::start().await;
    let eureka = client(
        &server,
        order_service()
            .secure_port(8443)
            .non_secure_port_enabled(false),
    )
    .await;
    let post = server.wait_for("POST", "/eureka/apps/", 1).await.remove(0);
    assert_eq!(post.path, "/eureka/apps/ORDER-SERVICE");
    assert_eq!(post.headers["content-type"], "application/json");
    assert_eq!(post.headers["accept"], "application/json");
    assert!(post.headers["accept-encoding"]
        .to_str()
        .unwrap()
        .contains("gzip"));

    let json: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
    let i = &json["instance"];
    assert_eq!(i["instanceId"], "orders.internal:order-service:8080");
    assert_eq!(i["hostName"], "orders.internal");
    assert_eq!(i["app"], "ORDER-SERVICE");
    assert_eq!(i["ipAddr"], "10.0.0.5");
    assert_eq!(i["status"], "UP");
    assert_eq!(i["overriddenStatus"], "UNKNOWN");
    assert_eq!(
        i["port"],
        serde_json::json!({"$": 8080, "@enabled": "false"})
    );
    assert_eq!(
        i["securePort"],
        serde_json::json!({"$": 8443, "@enabled": "true"})
    );
    assert_eq!(i["countryId"], 1);
    assert_eq!(
        i["dataCenterInfo"],
        serde_json::json!({"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"})
    );
    assert_eq!(i["leaseInfo"]["renewalIntervalInSecs"], 30);
    assert_eq!(i["leaseInfo"]["durationInSecs"], 90);
    assert_eq!(i["metadata"], serde_json::json!({"zone": "zone-a"}));
    assert_eq!(i["vipAddress"], "order-service");
    assert_eq!(i["secureVipAddress"], "order-service");
    assert_eq!(i["homePageUrl"], "http://orders.internal:8080/");
    assert_eq!(i["isCoordinatingDiscoveryServer"], "false");
    assert!(
        i["lastDirtyTimestamp"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            > 1_700_000_000_000
    );
    assert_eq!(i["lastDirtyTimestamp"], i["lastUpdatedTimestamp"]);
    assert!(eureka.is_registered());
    assert_eq!(
        eureka.instance_id(),
        Some("orders.internal:order-service:8080")
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn prefer_ip_address_registers_the_ip_as_host() {
    let server = FakeEureka::start().await;
    let _eureka = client(&server, order_service().prefer_ip_address(true)).await;
    let post = server.wait_for("POST", "/eureka/apps/", 1).await.remove(0);
    let info = InstanceInfo::from_json(&post.body).unwrap();
    assert_eq!(info.host_name, "10.0.0.5");
    assert_eq!(info.id(), "10.0.0.5:order-service:8080");
    assert_eq!(info.port, PortInfo::enabled(8080));
    assert_eq!(info.secure_port, PortInfo::disabled(443));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn heartbeats_every_renewal_interval_with_the_registered_timestamp() {
    let server = FakeEureka::start().await;
    let _eureka = client(&server, order_service()).await;
    let post = server.wait_for("POST", "/eureka/apps/", 1).await.remove(0);
    let ldt = InstanceInfo::from_json(&post.body)
        .unwrap()
        .last_dirty_timestamp
        .unwrap()
        .to_string();
    advance(Duration::from_secs(125)).await;
    let beats = server
        .wait_for("PUT", "/eureka/apps/ORDER-SERVICE/", 4)
        .await;
    assert_eq!(beats.len(), 4, "one heartbeat per 30 s over 125 s");
    let mut times = vec![post.at];
    times.extend(beats.iter().map(|b| b.at));
    for gap in gaps(&times) {
        assert!((gap - 30.0).abs() < 0.5, "gap {gap}");
    }
    for beat in &beats {
        assert_eq!(
            beat.path,
            "/eureka/apps/ORDER-SERVICE/orders.internal:order-service:8080"
        );
        assert_eq!(beat.query_value("status").as_deref(), Some("UP"));
        assert_eq!(
            beat.query_value("lastDirtyTimestamp").as_deref(),
            Some(ldt.as_str())
        );
    }
    assert_eq!(
        server.requests_matching("POST", "/").len(),
        1,
        "no needless re-registration"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn heartbeat_404_re_registers_at_once_with_a_newer_timestamp() {
    let server = FakeEureka::start().await;
    let eureka = client(&server, order_service()).await;
    let first = server.wait_for("POST", "/eureka/apps/", 1).await.remove(0);
    let first_ldt = InstanceInfo::from_json(&first.body)
        .unwrap()
        .last_dirty_timestamp
        .unwrap();
    server.forget_all();
    advance(Duration::from_secs(31)).await;
    let posts = server.wait_for("POST", "/eureka/apps/", 2).await;
    let beat = server.requests_matching("PUT", "/eureka/apps/")[0].clone();
    assert!(
        posts[1].at - beat.at < Duration::from_millis(100),
        "re-registered right after the 404"
    );
    let second_ldt = InstanceInfo::from_json(&posts[1].body)
        .unwrap()
        .last_dirty_timestamp
        .unwrap();
    assert!(second_ldt > first_ldt);
    assert!(server
        .instance("ORDER-SERVICE", "orders.internal:order-service:8080")
        .is_some());
    advance(Duration::from_secs(30)).await;
    let beats = server.wait_for("PUT", "/eureka/apps/", 2).await;
    assert_eq!(
        beats[1].query_value("lastDirtyTimestamp"),
        Some(second_ldt.to_string())
    );
    assert!(eureka.is_registered());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn failing_heartbeats_back_off_up_to_ten_times_the_interval() {
    let server = FakeEureka::start().await;
    let _eureka = client(&server, order_service()).await;
    server.wait_for("POST", "/eureka/apps/", 1).await;
    server.set_heartbeat_status(Some(500));
    for _ in 0..40 {
        advance(Duration::from_secs(60)).await;
    }
    let beats = server.requests_matching("PUT", "/eureka/apps/");
    let times: Vec<Instant> = beats.iter().map(|b| b.at).collect();
    let gaps = gaps(&times);
    // Ceilings double from 30 s: 60, 120, 240, then the 300 s cap; each less up to a quarter.
    let ceilings = [60.0, 120.0, 240.0, 300.0, 300.0, 300.0];
    assert!(gaps.len() >= ceilings.len(), "{gaps:?}");
    for (gap, ceiling) in gaps.iter().zip(ceilings) {
        assert!(
            *gap <= ceiling + 0.5 && *gap >= ceiling * 0.75 - 0.5,
            "gap {gap} vs ceiling {ceiling}: {gaps:?}"
        );
    }
    assert!(
        gaps.iter().all(|g| *g <= 300.5),
        "capped at 10× the interval: {gaps:?}"
    );

    // Recovery resets the cadence: two beats in 61 s, where the backoff would allow one at
    // most. A beat still on its way over loopback when `before` is read lands afterwards, so
    // the count is waited for and may be one higher.
    server.set_heartbeat_status(None);
    advance(Duration::from_secs(301)).await;
    let before = server.requests_matching("PUT", "/eureka/apps/").len();
    advance(Duration::from_secs(61)).await;
    let after = server
        .wait_for("PUT", "/eureka/apps/", before + 2)
        .await
        .len();
    assert!(
        (before + 2..=before + 3).contains(&after),
        "{before} heartbeats before, {after} after 61 s"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn registration_failures_back_off_and_then_succeed() {
    let server = FakeEureka::start().await;
    server.set_mode(Mode::Status(503));
    let eureka = client(&server, order_service()).await;
    for _ in 0..10 {
        advance(Duration::from_secs(30)).await;
    }
    let attempts = server.requests_matching("POST", "/eureka/apps/");
    assert!(
        (3..=5).contains(&attempts.len()),
        "backed off: {} attempts in 300 s",
        attempts.len()
    );
    assert!(!eureka.is_registered());
    server.set_mode(Mode::Normal);
    advance(Duration::from_secs(300)).await;
    server
        .wait_for("POST", "/eureka/apps/", attempts.len() + 1)
        .await;
    assert!(eureka.is_registered());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn status_changes_re_register_with_a_bumped_timestamp() {
    let server = FakeEureka::start().await;
    let eureka = client(
        &server,
        order_service().initial_status(InstanceStatus::Starting),
    )
    .await;
    let first = server.wait_for("POST", "/eureka/apps/", 1).await.remove(0);
    let first = InstanceInfo::from_json(&first.body).unwrap();
    assert_eq!(first.status, InstanceStatus::Starting);
    tokio::time::sleep(Duration::from_millis(5)).await;
    eureka.set_status(InstanceStatus::Up);
    let posts = server.wait_for("POST", "/eureka/apps/", 2).await;
    let second = InstanceInfo::from_json(&posts[1].body).unwrap();
    assert_eq!(second.status, InstanceStatus::Up);
    assert!(second.last_dirty_timestamp > first.last_dirty_timestamp);
    assert_eq!(
        second.overridden_status,
        InstanceStatus::Unknown,
        "never claims an override"
    );
    assert!(server
        .requests_matching("PUT", "/eureka/apps/ORDER-SERVICE/")
        .iter()
        .all(|r| !r.path.ends_with("/status")));

    eureka.set_status(InstanceStatus::Down);
    let posts = server.wait_for("POST", "/eureka/apps/", 3).await;
    assert_eq!(
        InstanceInfo::from_json(&posts[2].body).unwrap().status,
        InstanceStatus::Down
    );
    assert_eq!(eureka.status(), Some(InstanceStatus::Down));
    // Bursts are limited to two at once; the third change goes out within 15 s.
    eureka.set_status(InstanceStatus::OutOfService);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.requests_matching("POST", "/eureka/apps/").len(), 3);
    advance(Duration::from_secs(31)).await;
    let posts = server.wait_for("POST", "/eureka/apps/", 4).await;
    assert_eq!(
        InstanceInfo::from_json(&posts[3].body).unwrap().status,
        InstanceStatus::OutOfService
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn first_registrations_of_a_fleet_are_spread_out() {
    let server = FakeEureka::start().await;
    let mut clients = Vec::new();
    for n in 0..20u16 {
        let instance = InstanceConfig::new("fleet", 9000 + n)
            .host_name("fleet.internal")
            .ip_address("10.0.0.9");
        clients.push(
            EurekaClient::builder()
                .service_urls([server.url()])
                .instance(instance)
                .fetch_registry(false)
                .registration_jitter(Duration::from_secs(10))
                .start()
                .await
                .unwrap(),
        );
    }
    let start = Instant::now();
    advance(Duration::from_secs(11)).await;
    let posts = server.wait_for("POST", "/eureka/apps/FLEET", 20).await;
    let mut offsets: Vec<f64> = posts.iter().map(|p| (p.at - start).as_secs_f64()).collect();
    offsets.sort_by(f64::total_cmp);
    assert!(
        offsets[19] - offsets[0] >= 5.0,
        "spread over at least half the window: {offsets:?}"
    );
    let max_in_one_second = offsets
        .iter()
        .map(|t| {
            offsets
                .iter()
                .filter(|u| **u >= *t && **u < t + 1.0)
                .count()
        })
        .max()
        .unwrap();
    assert!(max_in_one_second <= 10, "{offsets:?}");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn basic_auth_from_the_url_is_sent_and_never_shown() {
    let server = FakeEureka::start().await;
    let url = format!("http://eureka-user:s3cret@{}/eureka/", server.addr);
    let eureka = EurekaClient::builder()
        .service_urls([url])
        .instance(order_service())
        .registration_jitter(Duration::ZERO)
        .start()
        .await
        .unwrap();
    let post = server.wait_for("POST", "/eureka/apps/", 1).await.remove(0);
    // base64("eureka-user:s3cret")
    assert_eq!(
        post.headers["authorization"],
        "Basic ZXVyZWthLXVzZXI6czNjcmV0"
    );
    let get = server.requests_matching("GET", "/eureka/apps/").remove(0);
    assert_eq!(
        get.headers["authorization"],
        "Basic ZXVyZWthLXVzZXI6czNjcmV0"
    );
    assert!(!format!("{eureka:?}").contains("s3cret"));

    let err = EurekaClient::builder()
        .service_urls(["ftp://u:s3cret@host/"])
        .start()
        .await
        .unwrap_err();
    assert!(!err.to_string().contains("s3cret"), "{err}");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn invalid_instances_are_refused_before_any_request() {
    let server = FakeEureka::start().await;
    for bad in [
        InstanceConfig::new("", 8080),
        InstanceConfig::new("bad/app", 8080),
        InstanceConfig::new("ok", 8080).instance_id("a/b"),
        InstanceConfig::new("ok", 0)
            .host_name("h")
            .ip_address("10.0.0.1"),
        InstanceConfig::new("ok", 1).host_name("evil\r\nX: y"),
    ] {
        let err = EurekaClient::builder()
            .service_urls([server.url()])
            .instance(bad)
            .start()
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid instance configuration"),
            "{err}"
        );
    }
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_development_preset_registers_at_once_and_fetches_twice_a_second() {
    let server = FakeEureka::start().await;
    let builder = EurekaClient::builder()
        .development()
        .service_urls([server.url()])
        .instance(order_service());
    let debug = format!("{builder:?}");
    assert!(debug.contains("registration_jitter: 0ns"), "{debug}");
    assert!(debug.contains("registry_fetch_interval: 500ms"), "{debug}");
    assert!(debug.contains("shutdown_timeout: 1s"), "{debug}");
    let start = Instant::now();
    let eureka = builder.start().await.unwrap();
    let post = server.wait_for("POST", "/eureka/apps/", 1).await.remove(0);
    assert!(post.at - start < Duration::from_millis(100), "no jitter");
    advance(Duration::from_millis(2_600)).await;
    let fetches = server.requests_matching("GET", "/eureka/apps/").len();
    assert!(fetches >= 5, "a fetch every 500 ms, saw {fetches} in 2.6 s");
    eureka.shutdown().await;
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn bound_to_registers_the_listeners_ip_and_port() {
    let server = FakeEureka::start().await;
    let eureka = client(
        &server,
        InstanceConfig::bound_to("order-service", "127.0.0.1:9123".parse().unwrap()),
    )
    .await;
    let post = server.wait_for("POST", "/eureka/apps/", 1).await.remove(0);
    let json: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
    let i = &json["instance"];
    assert_eq!(i["hostName"], "127.0.0.1");
    assert_eq!(i["ipAddr"], "127.0.0.1");
    assert_eq!(i["instanceId"], "127.0.0.1:order-service:9123");
    assert_eq!(
        i["port"],
        serde_json::json!({"$": 9123, "@enabled": "true"})
    );
    assert_eq!(i["homePageUrl"], "http://127.0.0.1:9123/");
    eureka.shutdown().await;
}

#[test]
fn bound_to_every_interface_registers_the_detected_ip() {
    let any = InstanceConfig::bound_to("order-service", "0.0.0.0:9123".parse().unwrap());
    let detected = InstanceConfig::new("order-service", 9123).resolved_ip();
    assert_eq!(any.resolved_ip(), detected);
    assert_eq!(any.resolved_host(), detected, "callers connect by IP");
}

/// With no jitter to wait for, `start` registers before its first fetch: when it returns, the
/// client's own registry already lists the instance, so a call to it can be made at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_returns_registered_and_listed_by_its_first_fetch() {
    let server = crate::embedded_registry().await;
    let eureka = EurekaClient::builder()
        .development()
        .service_urls([server.url()])
        .instance(InstanceConfig::bound_to(
            "order-service",
            "127.0.0.1:9124".parse().unwrap(),
        ))
        .start()
        .await
        .unwrap();
    assert!(eureka.is_registered());
    let listed = eureka
        .instances("order-service")
        .expect("the first fetch lists the instance that registered");
    assert_eq!(listed.len(), 1, "{listed:?}");
    eureka.shutdown().await;
    server.shutdown().await;
}
