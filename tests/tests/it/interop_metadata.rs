//! Metadata changed at run time by the feign-eureka client, as a real Spring Cloud Netflix Eureka
//! server shows it: each change arrives within seconds, and Netflix's on-demand rate limit (2 at
//! once, then one per 15 s) holds a burst's later changes back and then delivers the latest.
//! Needs the Java fixtures, so ignored unless asked for (`-- --ignored`, as `.ci/run` runs them).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use feign_eureka::model::InstanceInfo;
use feign_eureka::{EurekaClient, InstanceConfig};
use feign_tests::interop::{http_get, JavaApp};

/// The metadata the server at `eureka_url` holds for `RUST-META/rust-meta-1`, if it knows it.
async fn server_metadata(eureka_url: &str) -> Option<BTreeMap<String, String>> {
    let url = format!("{eureka_url}apps/RUST-META/rust-meta-1");
    let response = tokio::task::spawn_blocking(move || http_get(&url))
        .await
        .expect("blocking task")
        .ok()?;
    (response.status == 200)
        .then(|| InstanceInfo::from_json(&response.body).ok())
        .flatten()
        .map(|info| info.metadata)
}

fn version(metadata: &Option<BTreeMap<String, String>>) -> Option<&str> {
    metadata.as_ref()?.get("version").map(String::as_str)
}

/// Polls the server every 100 ms until it shows `expected` as the `version` metadata; returns
/// how long that took, or panics after `timeout`.
async fn shows_version(eureka_url: &str, expected: &str, timeout: Duration) -> Duration {
    let started = Instant::now();
    let mut last = None;
    while started.elapsed() < timeout {
        last = server_metadata(eureka_url).await;
        if version(&last) == Some(expected) {
            return started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server did not show version {expected} within {timeout:?}; it shows {last:?}");
}

/// Netflix's defaults throughout (30 s heartbeat and replication interval), so only the
/// on-demand path can deliver a change within seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn metadata_changes_reach_the_spring_server_within_the_rate_limit() {
    let server = tokio::task::spawn_blocking(JavaApp::shared_eureka_server)
        .await
        .expect("blocking task")
        .expect("the Java fixtures");
    let url = server.eureka_url();
    let eureka = EurekaClient::builder()
        .service_urls([url.as_str()])
        .instance(
            InstanceConfig::new("rust-meta", 9400)
                .ip_address("127.0.0.1")
                .prefer_ip_address(true)
                .instance_id("rust-meta-1")
                .metadata("version", "0"),
        )
        .fetch_registry(false)
        .registration_jitter(Duration::ZERO)
        .start()
        .await
        .expect("client starts");
    shows_version(&url, "0", Duration::from_secs(10)).await;

    eureka.set_metadata("version", "1").unwrap();
    shows_version(&url, "1", Duration::from_secs(3)).await;
    eureka.set_metadata("version", "2").unwrap();
    shows_version(&url, "2", Duration::from_secs(3)).await;

    // The burst is spent: the next changes wait for a token, and go out as one.
    let held_from = Instant::now();
    for next in 3..=5 {
        eureka.set_metadata("version", next.to_string()).unwrap();
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let meanwhile = server_metadata(&url).await;
    assert_eq!(
        version(&meanwhile),
        Some("2"),
        "the rate limit holds the changes back"
    );
    shows_version(&url, "5", Duration::from_secs(15)).await;
    let held = held_from.elapsed();
    assert!(
        held >= Duration::from_secs(8),
        "held back {held:?}, until the next token"
    );

    eureka.shutdown().await;
}
