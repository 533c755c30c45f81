//! The status from the application's health check, against a Eureka-speaking server on
//! 127.0.0.1: a change is registered at once (not at the next heartbeat), a panicking or
//! hanging check reads as DOWN and never stops heartbeats, and
//! `eureka.client.healthcheck.enabled` turns the check off or requires one.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use feign_eureka::model::{InstanceInfo, InstanceStatus};
use feign_eureka::{Error, EurekaClient, EurekaClientBuilder, InstanceConfig};
use feign_test_support::eureka::FakeEureka;
use tokio::time::{sleep as advance, Instant};

/// A service with a 30 s heartbeat whose health is asked every 5 s.
fn builder(server: &FakeEureka) -> EurekaClientBuilder {
    EurekaClient::builder()
        .service_urls([server.url()])
        .instance(InstanceConfig::new("checked", 8080).ip_address("10.0.0.7"))
        .fetch_registry(false)
        .registration_jitter(Duration::ZERO)
        .instance_info_replication_interval(Duration::from_secs(5))
}

/// [`builder`] with the Spring properties of `yaml` applied.
#[cfg(feature = "config")]
fn configured(server: &FakeEureka, yaml: &str) -> EurekaClientBuilder {
    let config = feign_config::Config::from_yaml_str(yaml, "application.yml").unwrap();
    builder(server).config(&config).unwrap()
}

/// Starts the client and waits for its first registration; returns the client and that
/// registration's arrival.
async fn registered(server: &FakeEureka, builder: EurekaClientBuilder) -> (EurekaClient, Instant) {
    let eureka = builder.start().await.unwrap();
    let first = server.wait_for("POST", "/eureka/apps/CHECKED", 1).await;
    (eureka, first[0].at)
}

fn registered_statuses(server: &FakeEureka) -> Vec<InstanceStatus> {
    server
        .requests_matching("POST", "/eureka/apps/CHECKED")
        .iter()
        .map(|post| InstanceInfo::from_json(&post.body).unwrap().status)
        .collect()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_health_change_is_registered_at_once_not_at_the_next_heartbeat() {
    let server = FakeEureka::start().await;
    let health = Arc::new(Mutex::new(InstanceStatus::Up));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let (reported, seen) = (health.clone(), asked.clone());
    let check = builder(&server).health_check(move |current| {
        seen.lock().unwrap().push(current);
        std::future::ready(*reported.lock().unwrap())
    });
    let (eureka, started) = registered(&server, check).await;

    *health.lock().unwrap() = InstanceStatus::Down;
    let posts = server.wait_for("POST", "/eureka/apps/CHECKED", 2).await;
    let waited = posts[1].at - started;
    assert!(
        waited <= Duration::from_secs(6),
        "DOWN registered {waited:?} after the health changed: within one 5 s poll, not at the 30 s heartbeat"
    );
    assert!(server.requests_matching("PUT", "/eureka/apps/").is_empty());
    assert_eq!(eureka.status(), Some(InstanceStatus::Down));

    *health.lock().unwrap() = InstanceStatus::OutOfService;
    server.wait_for("POST", "/eureka/apps/CHECKED", 3).await;
    *health.lock().unwrap() = InstanceStatus::Up;
    server.wait_for("POST", "/eureka/apps/CHECKED", 4).await;
    assert_eq!(
        registered_statuses(&server),
        [
            InstanceStatus::Up,
            InstanceStatus::Down,
            InstanceStatus::OutOfService,
            InstanceStatus::Up
        ]
    );
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked.contains(&InstanceStatus::Down) && asked.contains(&InstanceStatus::OutOfService),
        "the check is given the registered status: {asked:?}"
    );

    // An unchanged answer sends nothing more; heartbeats carry on.
    advance(Duration::from_secs(65)).await;
    assert_eq!(registered_statuses(&server).len(), 4);
    assert!(server.requests_matching("PUT", "/eureka/apps/").len() >= 2);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_panicking_check_reads_as_down_and_heartbeats_go_on() {
    let server = FakeEureka::start().await;
    let panics = Arc::new(Mutex::new(false));
    let panicking = panics.clone();
    let check = builder(&server).health_check(move |_| {
        let panic_now = *panicking.lock().unwrap();
        async move {
            assert!(!panic_now, "health check panics on purpose");
            InstanceStatus::Up
        }
    });
    let (eureka, _) = registered(&server, check).await;

    *panics.lock().unwrap() = true;
    server.wait_for("POST", "/eureka/apps/CHECKED", 2).await;
    assert_eq!(eureka.status(), Some(InstanceStatus::Down));
    advance(Duration::from_secs(95)).await;
    let beats = server.requests_matching("PUT", "/eureka/apps/CHECKED/");
    assert!(beats.len() >= 3, "heartbeats go on: {}", beats.len());
    assert!(beats
        .iter()
        .all(|beat| beat.query_value("status").as_deref() == Some("DOWN")));

    *panics.lock().unwrap() = false;
    server.wait_for("POST", "/eureka/apps/CHECKED", 3).await;
    assert_eq!(eureka.status(), Some(InstanceStatus::Up));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_hanging_check_is_cut_off_reads_as_down_and_heartbeats_go_on() {
    let server = FakeEureka::start().await;
    let hangs = Arc::new(Mutex::new(false));
    let hanging = hangs.clone();
    let check = builder(&server)
        .health_check_timeout(Duration::from_secs(2))
        .health_check(move |_| {
            let hang = *hanging.lock().unwrap();
            async move {
                if hang {
                    std::future::pending::<()>().await;
                }
                InstanceStatus::Up
            }
        });
    let (eureka, started) = registered(&server, check).await;

    *hangs.lock().unwrap() = true;
    let posts = server.wait_for("POST", "/eureka/apps/CHECKED", 2).await;
    assert!(posts[1].at - started <= Duration::from_secs(5 + 2 + 1));
    assert_eq!(eureka.status(), Some(InstanceStatus::Down));
    advance(Duration::from_secs(95)).await;
    assert!(
        server
            .requests_matching("PUT", "/eureka/apps/CHECKED/")
            .len()
            >= 3
    );
}

#[cfg(feature = "config")]
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn healthcheck_enabled_false_ignores_the_check_and_true_requires_one() {
    let server = FakeEureka::start().await;
    let off = "eureka.client.healthcheck.enabled: false\neureka.client.instance-info-replication-interval-seconds: 5\n";
    let (eureka, _) = registered(
        &server,
        configured(&server, off).health_check(|_| std::future::ready(InstanceStatus::Down)),
    )
    .await;
    advance(Duration::from_secs(20)).await;
    assert_eq!(registered_statuses(&server), [InstanceStatus::Up]);
    assert_eq!(eureka.status(), Some(InstanceStatus::Up));

    let on = "eureka.client.healthcheck.enabled: true";
    let error = configured(&server, on).start().await.unwrap_err();
    assert!(matches!(error, Error::NoHealthCheck), "{error}");
    assert!(error
        .to_string()
        .contains("eureka.client.healthcheck.enabled"));
}

/// `eureka.client.on-demand-update-status-change: false`: a status change waits for the next
/// heartbeat, which registers it instead of renewing.
#[cfg(feature = "config")]
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn status_changes_wait_for_the_heartbeat_when_not_sent_on_demand() {
    let server = FakeEureka::start().await;
    let health = Arc::new(Mutex::new(InstanceStatus::Up));
    let reported = health.clone();
    let check = configured(
        &server,
        "eureka.client.on-demand-update-status-change: false",
    )
    .health_check(move |_| std::future::ready(*reported.lock().unwrap()));
    let (_eureka, first) = registered(&server, check).await;
    *health.lock().unwrap() = InstanceStatus::Down;
    advance(Duration::from_secs(20)).await;
    assert_eq!(registered_statuses(&server), [InstanceStatus::Up]);
    let posts = server.wait_for("POST", "/eureka/apps/CHECKED", 2).await;
    let waited = posts[1].at - first;
    assert!(
        waited >= Duration::from_secs(29) && waited <= Duration::from_secs(31),
        "sent with the heartbeat, {waited:?} after registering"
    );
    assert_eq!(registered_statuses(&server)[1], InstanceStatus::Down);
}
