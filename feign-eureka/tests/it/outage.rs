//! Long-running transport behaviour against Eureka-speaking servers on 127.0.0.1, in paused
//! time: the server is picked again every 10–30 minutes (Eureka's sessioned client), and a long
//! outage warns at most once a minute per failing task (C1).

use std::collections::BTreeSet;
use std::time::Duration;

use feign_eureka::model::Applications;
use feign_eureka::{EurekaClient, InstanceConfig};
use feign_test_support::eureka::{instance, FakeEureka, Mode};
use feign_test_support::Captured;
use tokio::time::{sleep, Instant};
use tracing::Level;

const REPICKED: &str = "eureka session ended; servers picked again";

/// Three healthy servers with the same registry and a matching empty delta.
async fn three_servers() -> Vec<FakeEureka> {
    let mut servers = Vec::new();
    for _ in 0..3 {
        let server = FakeEureka::start().await;
        server.put(instance("orders", 1));
        let mut delta = Applications::new(Vec::new());
        delta.apps_hashcode = "UP_1_".into();
        server.set_delta(Some(delta.to_json()));
        servers.push(server);
    }
    servers
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_server_is_picked_again_every_ten_to_thirty_minutes() {
    let (log, _guard) = Captured::install();
    let servers = three_servers().await;
    let start = Instant::now();
    let eureka = EurekaClient::builder()
        .service_urls(servers.iter().map(FakeEureka::url))
        .registry_fetch_interval(Duration::from_secs(30))
        .seed(7)
        .start()
        .await
        .unwrap();
    sleep(Duration::from_secs(8 * 3600)).await;

    // Who served each fetch, in time order.
    let mut served: Vec<(Instant, usize)> = servers
        .iter()
        .enumerate()
        .flat_map(|(n, s)| {
            s.requests_matching("GET", "/eureka/apps")
                .into_iter()
                .map(move |r| (r.at, n))
        })
        .collect();
    served.sort_by_key(|(at, _)| *at);
    assert!(
        served.len() >= 8 * 120,
        "one fetch every 30 s: {}",
        served.len()
    );

    // Sessions last 10–30 min (plus up to one fetch interval until the next call notices).
    let repicks = log.matching(Level::DEBUG, REPICKED);
    let mut session_start = start;
    for repick in &repicks {
        let length = repick.at - session_start;
        assert!(
            length >= Duration::from_secs(600) && length <= Duration::from_secs(1800 + 30),
            "session of {length:?}"
        );
        session_start = repick.at;
    }
    assert!(
        repicks.len() >= 15,
        "8 hours hold 16 to 48 sessions, so at least 15 re-picks: {}",
        repicks.len()
    );

    // Within a session every fetch goes to one server, the one picked when it began.
    for window in served.windows(2) {
        let (at, server) = window[1];
        if server != window[0].1 {
            let picked = repicks
                .iter()
                .rfind(|r| r.at <= at)
                .expect("a different server only after a re-pick");
            assert_eq!(picked.fields["server"], servers[server].url());
        }
    }
    let used: BTreeSet<usize> = served.iter().map(|(_, n)| *n).collect();
    assert_eq!(used.len(), 3, "every server gets its turn");
    let switches = served.windows(2).filter(|w| w[0].1 != w[1].1).count();
    assert!(
        switches >= 5,
        "the client moves between servers: {switches}"
    );
    assert_eq!(eureka.instances("orders").unwrap().len(), 1);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_long_outage_warns_at_most_once_a_minute_per_failing_task() {
    let (log, _guard) = Captured::install();
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    let eureka = EurekaClient::builder()
        .service_urls([server.url()])
        .registry_fetch_interval(Duration::from_secs(1))
        .registration_jitter(Duration::ZERO)
        .instance(
            InstanceConfig::new("billing", 9000)
                .host_name("10.0.0.9")
                .ip_address("10.0.0.9")
                .lease_renewal_interval(Duration::from_secs(1)),
        )
        .start()
        .await
        .unwrap();
    server.wait_for("POST", "/eureka/apps/BILLING", 1).await;
    sleep(Duration::from_secs(5)).await;
    let warnings = |since: Instant| -> Vec<_> {
        log.events()
            .into_iter()
            .filter(|e| {
                e.target.starts_with("feign_eureka") && e.level == Level::WARN && e.at >= since
            })
            .collect()
    };
    assert!(warnings(Instant::now() - Duration::from_secs(5)).is_empty());

    server.set_mode(Mode::DropConnections);
    let outage = Instant::now();
    sleep(Duration::from_secs(30 * 60)).await;

    // Both tasks failed far more often than once a minute (backoff caps at 10 × 1 s) ...
    let attempts = server
        .connection_attempts()
        .iter()
        .filter(|t| **t >= outage)
        .count();
    assert!(attempts >= 300, "failed attempts: {attempts}");
    // ... yet each kind of failure was warned about at most once a minute, and still regularly.
    let warned = warnings(outage);
    let kinds: BTreeSet<&str> = warned.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(
        kinds,
        BTreeSet::from([
            "heartbeat failed",
            "registry fetch failed; serving the cached registry"
        ]),
        "{warned:#?}"
    );
    for kind in kinds {
        let times: Vec<Instant> = warned
            .iter()
            .filter(|e| e.message == kind)
            .map(|e| e.at)
            .collect();
        for gap in times.windows(2).map(|w| w[1] - w[0]) {
            assert!(
                gap >= Duration::from_secs(60),
                "{kind}: warned again after {gap:?}"
            );
        }
        assert!(
            (25..=31).contains(&times.len()),
            "{kind}: {} warnings in 30 minutes",
            times.len()
        );
    }
    // The warnings say how many failures went unlogged in between.
    let later = warned
        .iter()
        .filter(|e| e.message == "heartbeat failed")
        .nth(1)
        .unwrap();
    let unlogged: u64 = later.fields["unlogged_failures"].parse().unwrap();
    assert!(unlogged >= 4, "{later:?}");
    assert_eq!(eureka.instances("orders").unwrap().len(), 1);
}
