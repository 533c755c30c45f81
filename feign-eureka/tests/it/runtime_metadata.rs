//! Metadata changed at run time: sent promptly by re-registration, within Netflix's on-demand
//! rate limit (2 at once, then one per 15 s for the default 30 s replication interval), with
//! what the limit held back coalesced so the latest state arrives. Checked against the
//! embedded registry (what a registry then shows) and a recording server (when each
//! re-registration left).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::embedded_registry;
use feign_eureka::model::InstanceInfo;
use feign_eureka::{Error, EurekaClient, InstanceConfig};
use feign_test_support::eureka::FakeEureka;
use tokio::time::{sleep as advance, Instant};

fn instance() -> InstanceConfig {
    InstanceConfig::new("tagged", 8080)
        .ip_address("127.0.0.1")
        .prefer_ip_address(true)
        .instance_id("tagged-1")
        .metadata("zone", "zone-a")
}

async fn client(url: &str, replication_interval: Duration) -> EurekaClient {
    EurekaClient::builder()
        .service_urls([url])
        .instance(instance())
        .fetch_registry(false)
        .registration_jitter(Duration::ZERO)
        .instance_info_replication_interval(replication_interval)
        .start()
        .await
        .unwrap()
}

/// The metadata the registry at `url` holds for `TAGGED/tagged-1`, if it knows the instance.
async fn registered_metadata(url: &str) -> Option<BTreeMap<String, String>> {
    let response = reqwest::Client::new()
        .get(format!("{url}apps/TAGGED/tagged-1"))
        .header("accept", "application/json")
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let info = InstanceInfo::from_json(&response.bytes().await.ok()?).ok()?;
    Some(info.metadata)
}

/// Polls the registry every 20 ms until `check` holds of its metadata, for at most `within`.
async fn registry_shows(
    url: &str,
    within: Duration,
    check: impl Fn(&BTreeMap<String, String>) -> bool,
) -> Option<BTreeMap<String, String>> {
    let deadline = Instant::now() + within;
    let mut last = None;
    while Instant::now() < deadline {
        last = registered_metadata(url).await;
        if last.as_ref().is_some_and(&check) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the registry did not show the expected metadata within {within:?}; it shows {last:?}");
}

fn version_is(version: &str) -> impl Fn(&BTreeMap<String, String>) -> bool + '_ {
    move |metadata| metadata.get("version").map(String::as_str) == Some(version)
}

/// Against the embedded registry, in real time with a 1 s replication interval (a token every
/// 500 ms): changes reach the registry within moments, entries can be removed and set in one
/// change, and a burst beyond the limit delivers its last value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_changes_reach_the_embedded_registry_and_the_latest_wins() {
    let server = embedded_registry().await;
    let url = server.url().to_owned();
    let eureka = client(&url, Duration::from_secs(1)).await;
    registry_shows(&url, Duration::from_secs(5), |m| {
        m.get("zone").map(String::as_str) == Some("zone-a")
    })
    .await;

    eureka.set_metadata("version", "2").unwrap();
    registry_shows(&url, Duration::from_secs(2), version_is("2")).await;

    eureka
        .update_metadata([("weight", "5"), ("canary", "true")])
        .unwrap();
    eureka.remove_metadata("zone");
    let shown = registry_shows(&url, Duration::from_secs(2), |m| {
        m.get("canary").is_some() && !m.contains_key("zone")
    })
    .await
    .unwrap();
    assert_eq!(shown.get("weight").map(String::as_str), Some("5"));
    assert_eq!(shown.get("version").map(String::as_str), Some("2"));
    assert_eq!(eureka.metadata(), Some(shown));

    for version in 3..=9 {
        eureka.set_metadata("version", version.to_string()).unwrap();
    }
    registry_shows(&url, Duration::from_secs(3), version_is("9")).await;

    let refused = eureka.set_metadata("@class", "x").unwrap_err();
    assert!(matches!(refused, Error::InvalidInstance(_)), "{refused}");
    eureka.shutdown().await;
    server.shutdown().await;
}

/// Against a recording server, on tokio's paused clock with Netflix's defaults (30 s heartbeat
/// and replication interval): two changes go out at once, the fifth within the minute waits for
/// the limit (15 s after the burst) and goes out as one re-registration carrying the latest
/// value; over a minute of changes every second, at most 2 + 4 on-demand re-registrations leave.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_rate_limit_holds_a_burst_back_and_delivers_the_latest() {
    let server = FakeEureka::start().await;
    let eureka = client(&server.url(), Duration::from_secs(30)).await;
    server.wait_for("POST", "/eureka/apps/TAGGED", 1).await;
    let versions = || -> Vec<(Instant, Option<String>)> {
        server
            .requests_matching("POST", "/eureka/apps/TAGGED")
            .iter()
            .map(|post| {
                let info = InstanceInfo::from_json(&post.body).unwrap();
                (post.at, info.metadata.get("version").cloned())
            })
            .collect()
    };

    let burst = Instant::now();
    eureka.set_metadata("version", "1").unwrap();
    server.wait_for("POST", "/eureka/apps/TAGGED", 2).await;
    eureka.set_metadata("version", "2").unwrap();
    server.wait_for("POST", "/eureka/apps/TAGGED", 3).await;
    for version in 3..=5 {
        eureka.set_metadata("version", version.to_string()).unwrap();
    }
    advance(Duration::from_secs(10)).await;
    assert_eq!(versions().len(), 3, "held back: {:?}", versions());

    let posts = server.wait_for("POST", "/eureka/apps/TAGGED", 4).await;
    let held = posts[3].at - burst;
    assert!(
        held >= Duration::from_secs(14) && held <= Duration::from_secs(16),
        "the held-back change left {held:?} after the burst"
    );
    assert_eq!(versions()[3].1.as_deref(), Some("5"), "the latest value");
    // Setting what is already registered sends nothing.
    eureka.set_metadata("version", "5").unwrap();

    // A minute of changes, one a second: tokens come back one per 15 s.
    let minute = Instant::now();
    let before = versions().len();
    for version in 100..160 {
        eureka.set_metadata("version", version.to_string()).unwrap();
        advance(Duration::from_secs(1)).await;
    }
    let in_the_minute = versions()
        .iter()
        .skip(before)
        .filter(|(at, _)| *at < minute + Duration::from_secs(60))
        .count();
    // The bucket was near empty when the minute began: 4 tokens, plus the heartbeats at which
    // a pending change is registered instead of renewed (2 in a minute).
    assert!(
        (3..=6).contains(&in_the_minute),
        "{in_the_minute} re-registrations in one minute: {:?}",
        versions()
    );
    advance(Duration::from_secs(16)).await;
    assert_eq!(
        versions().last().unwrap().1.as_deref(),
        Some("159"),
        "the latest value arrives once the limit allows"
    );
}
