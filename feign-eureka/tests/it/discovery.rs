//! Discovery against a Eureka-speaking server on 127.0.0.1: full fetch, deltas and hash
//! reconciliation (C6), outages (C1, C2), tolerant parsing (C4), poisoned registrations (C5),
//! the mass-disappearance guard (C3), gzip, and change notification for feign-lb.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use feign_eureka::model::{ActionType, Application, Applications, InstanceInfo, InstanceStatus};
use feign_eureka::{BackupRegistry, EurekaClient, EurekaClientBuilder};
use feign_lb::InstanceSupplier;
use feign_test_support::eureka::{instance, FakeEureka, Mode};
use feign_test_support::{closed_port_url, TempDir};
use tokio::time::{sleep, Instant};

const LEGACY: &str = include_str!("../client_golden/legacy_variants.json");

fn builder(server: &FakeEureka) -> EurekaClientBuilder {
    EurekaClient::builder()
        .service_urls([server.url()])
        .registry_fetch_interval(Duration::from_secs(30))
}

/// A service URL on a port nothing listens on.
fn closed_url() -> String {
    format!("{}/eureka/", closed_port_url())
}

/// Starts `builder` requiring the first fetch, and checks that it fails for that reason.
async fn assert_enforced_start_fails(builder: EurekaClientBuilder) {
    let err = builder
        .enforce_fetch_at_init(true)
        .start()
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with("initial registry fetch failed"),
        "{err}"
    );
}

fn ids(instances: &[feign_lb::ServiceInstance]) -> Vec<String> {
    let mut ids: Vec<String> = instances
        .iter()
        .map(|i| i.instance_id().to_owned())
        .collect();
    ids.sort();
    ids
}

fn delta_of(changes: Vec<(InstanceInfo, ActionType)>, server: &FakeEureka) -> String {
    let mut apps: Vec<Application> = Vec::new();
    for (mut info, action) in changes {
        info.action_type = Some(action);
        match apps.iter_mut().find(|a| a.name == info.app) {
            Some(app) => app.instances.push(info),
            None => apps.push(Application::new(&info.app.clone(), vec![info])),
        }
    }
    let mut delta = Applications::new(apps);
    delta.apps_hashcode = server.registry().reconcile_hash_code();
    delta.versions_delta = 5;
    delta.to_json()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn full_fetch_at_start_then_deltas_keep_the_supplier_current() {
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    server.put(instance("orders", 2));
    let mut down = instance("orders", 3);
    down.status = InstanceStatus::Down;
    server.put(down);
    let eureka = builder(&server).start().await.unwrap();
    let supplier = eureka.supplier();
    assert_eq!(
        ids(&supplier.instances("ORDERS").unwrap()),
        ["orders-1", "orders-2"],
        "only UP is routable"
    );
    assert_eq!(eureka.instance_count(), 3);
    assert_eq!(eureka.registry_hash_code(), "DOWN_1_UP_2_");
    let get = &server.requests_matching("GET", "/eureka/apps")[0];
    assert_eq!(get.path, "/eureka/apps/");
    assert_eq!(get.headers["accept"], "application/json");

    // A change on the server arrives through the delta, and the supplier says so at once.
    let seen = supplier.version();
    let changed = supplier.changed(seen);
    server.put(instance("orders", 4));
    server.remove("orders", "orders-1");
    server.set_delta(Some(delta_of(
        vec![
            (instance("orders", 4), ActionType::Added),
            (instance("orders", 1), ActionType::Deleted),
        ],
        &server,
    )));
    let started = Instant::now();
    changed.await;
    assert!(
        started.elapsed() <= Duration::from_secs(31),
        "heard of the change with the next delta"
    );
    assert!(supplier.version() > seen);
    assert_eq!(
        ids(&supplier.instances("orders").unwrap()),
        ["orders-2", "orders-4"]
    );
    assert_eq!(
        server.requests_matching("GET", "/eureka/apps/delta").len(),
        1
    );
    assert_eq!(
        server.requests_matching("GET", "/eureka/apps/").len(),
        2,
        "1 full + 1 delta, no reconcile"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn repeated_and_unknown_deltas_merge_idempotently() {
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    server.put(instance("orders", 2));
    let eureka = builder(&server).start().await.unwrap();
    let mut modified = instance("orders", 2);
    modified.status = InstanceStatus::OutOfService;
    server.put(modified.clone());
    server.set_delta(Some(delta_of(
        vec![
            (modified, ActionType::Modified),
            (instance("orders", 9), ActionType::Deleted),
        ],
        &server,
    )));
    // The server repeats the same delta for 3 minutes; applying it again changes nothing.
    sleep(Duration::from_secs(185)).await;
    assert_eq!(
        server.requests_matching("GET", "/eureka/apps/delta").len(),
        6
    );
    assert_eq!(
        server.requests_matching("GET", "/eureka/apps/").len(),
        7,
        "no full fetch: hashes matched"
    );
    assert_eq!(eureka.registry_hash_code(), "OUT_OF_SERVICE_1_UP_1_");
    assert_eq!(ids(&eureka.instances("orders").unwrap()), ["orders-1"]);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn hash_mismatch_triggers_exactly_one_full_fetch() {
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    server.put(instance("orders", 2));
    let eureka = builder(&server).start().await.unwrap();
    // Changes the client missed (outside the delta window): one instance went DOWN and another
    // appeared; the delta shows only the new one, so the hashes differ.
    let mut down = instance("orders", 1);
    down.status = InstanceStatus::Down;
    server.put(down);
    server.put(instance("orders", 3));
    server.set_delta(Some(delta_of(
        vec![(instance("orders", 3), ActionType::Added)],
        &server,
    )));
    assert_eq!(server.registry().apps_hashcode, "DOWN_1_UP_2_");
    sleep(Duration::from_secs(31)).await;
    let fulls = server.requests_matching("GET", "/eureka/apps/").len()
        - server.requests_matching("GET", "/eureka/apps/delta").len();
    assert_eq!(fulls, 2, "start + exactly one reconciling full fetch");
    assert_eq!(eureka.registry_hash_code(), "DOWN_1_UP_2_");
    assert_eq!(
        eureka.applications().to_json(),
        server.registry().to_json(),
        "final state equals the server's"
    );
    assert_eq!(
        ids(&eureka.instances("orders").unwrap()),
        ["orders-2", "orders-3"]
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn refused_delta_falls_back_to_a_full_fetch() {
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    let eureka = builder(&server).start().await.unwrap();
    server.put(instance("orders", 2));
    // No delta configured: the fake answers 403 like a server with deltas disabled.
    eureka.refresh().await.unwrap();
    assert_eq!(
        ids(&eureka.instances("orders").unwrap()),
        ["orders-1", "orders-2"]
    );
    // An unreadable delta also falls back.
    server.put(instance("orders", 3));
    server.set_delta(Some("{not json".into()));
    eureka.refresh().await.unwrap();
    assert_eq!(eureka.instances("orders").unwrap().len(), 3);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn thirty_minute_outage_keeps_serving_cached_instances_with_backoff() {
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    server.put(instance("orders", 2));
    let eureka = builder(&server).start().await.unwrap();
    let supplier = eureka.supplier();
    server.set_mode(Mode::DropConnections);
    let outage = Instant::now();
    let mut observed = 0;
    while outage.elapsed() < Duration::from_secs(30 * 60) {
        sleep(Duration::from_secs(10)).await;
        let instances = supplier.instances("orders").expect("cached instances stay");
        assert_eq!(instances.len(), 2);
        observed += 1;
    }
    assert_eq!(observed, 180);
    let staleness = eureka.staleness().unwrap();
    assert!(staleness >= Duration::from_secs(29 * 60), "{staleness:?}");
    let attempts: Vec<f64> = server
        .connection_attempts()
        .iter()
        .filter(|t| **t > outage)
        .map(|t| (*t - outage).as_secs_f64())
        .collect();
    let gaps: Vec<f64> = attempts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        attempts.len() >= 7 && attempts.len() <= 16,
        "backed off: {attempts:?}"
    );
    assert!(
        gaps.iter().all(|g| *g <= 300.5),
        "capped at 10× the interval: {gaps:?}"
    );
    assert!(
        gaps.iter().any(|g| *g >= 225.0),
        "reached the cap: {gaps:?}"
    );

    // Recovery: the next fetch succeeds and staleness drops.
    server.set_mode(Mode::Normal);
    sleep(Duration::from_secs(301)).await;
    assert!(eureka.staleness().unwrap() < Duration::from_secs(301));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn eureka_down_at_start_starts_anyway_and_fails_fast() {
    let url = closed_url();
    let eureka = EurekaClient::builder()
        .service_urls([url.clone()])
        .start()
        .await
        .unwrap();
    let started = std::time::Instant::now();
    assert!(eureka.supplier().instances("orders").is_none());
    assert!(started.elapsed() < Duration::from_millis(10));
    assert_eq!(eureka.staleness(), None);

    assert_enforced_start_fails(EurekaClient::builder().service_urls([url])).await;
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn failover_tries_the_next_server_and_sticks_to_the_one_that_answered() {
    let good = FakeEureka::start().await;
    good.put(instance("orders", 1));
    let bad = FakeEureka::start().await;
    bad.set_mode(Mode::Status(500));
    let eureka = EurekaClient::builder()
        .service_urls([bad.url(), good.url()])
        .start()
        .await
        .unwrap();
    assert_eq!(eureka.instances("orders").unwrap().len(), 1);
    let bad_before = bad.requests().len();
    for _ in 0..5 {
        eureka.refresh().await.unwrap();
    }
    assert_eq!(
        bad.requests().len(),
        bad_before,
        "sticks to the server that answered"
    );
    assert!(bad_before <= 1);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn legacy_payload_variants_parse_and_only_usable_up_instances_route() {
    let server = FakeEureka::start().await;
    server.set_full_override(Some(LEGACY.into()));
    let eureka = builder(&server).start().await.unwrap();
    // a and b are UP and well-formed; c..f are not UP; g has no ipAddr; one element is junk.
    assert_eq!(ids(&eureka.instances("orders").unwrap()), ["a", "b"]);
    assert_eq!(eureka.instance_count(), 7);
    let a = eureka
        .instances("orders")
        .unwrap()
        .iter()
        .find(|i| i.instance_id() == "a")
        .unwrap()
        .clone();
    assert_eq!(a.zone(), Some("zone-a"));
    assert_eq!(a.metadata().get("weight").map(String::as_str), Some("5"));
    assert_eq!(a.port(), 8080);

    // A bad document keeps the last good registry.
    server.set_full_override(Some("{\"applications\":".into()));
    assert!(eureka.refresh().await.is_err());
    assert_eq!(eureka.instances("orders").unwrap().len(), 2);
    server.set_full_override(Some("<applications><application/></applications>".into()));
    assert!(eureka.refresh().await.is_err());
    assert_eq!(eureka.instances("orders").unwrap().len(), 2);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn oversized_registry_is_refused_and_the_cache_kept() {
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    let eureka = builder(&server)
        .max_registry_bytes(64 * 1024)
        .start()
        .await
        .unwrap();
    assert_eq!(eureka.instances("orders").unwrap().len(), 1);
    for n in 2..200 {
        server.put(instance("orders", n));
    }
    let err = eureka.refresh().await.unwrap_err();
    assert_eq!(err.to_string(), "registry fetch failed");
    let why = std::error::Error::source(&err)
        .expect("the reason")
        .to_string();
    assert!(why.contains("larger than"), "{why}");
    assert_eq!(eureka.instances("orders").unwrap().len(), 1);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn gzip_responses_are_inflated() {
    let server = FakeEureka::start().await;
    server.set_gzip(true);
    server.put(instance("orders", 1));
    let eureka = builder(&server).start().await.unwrap();
    assert_eq!(eureka.instances("orders").unwrap().len(), 1);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn poisoned_registrations_are_never_routed_to() {
    // A listener standing for the cloud metadata service: it must see no connection at all.
    let trap = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let trap_addr = trap.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while trap.accept().await.is_ok() {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });

    let server = FakeEureka::start().await;
    let poison = |id: &str, host: &str, ip: &str, port: u16| {
        let mut info = InstanceInfo::new("orders", host, ip, port);
        info.instance_id = Some(id.into());
        info.home_page_url = Some(format!("http://{trap_addr}/"));
        info.status_page_url = Some(format!("http://{trap_addr}/info"));
        info.health_check_url = Some(format!("http://{trap_addr}/health"));
        info
    };
    server.put(poison("good", "10.0.0.1", "10.0.0.1", 8080));
    server.put(poison("metadata", "169.254.169.254", "169.254.169.254", 80));
    server.put(poison("any4", "0.0.0.0", "0.0.0.0", 8080));
    server.put(poison("any6", "::", "::", 8080));
    server.put(poison("port0", "10.0.0.2", "10.0.0.2", 0));
    server.put(poison("slash", "a/b@evil", "10.0.0.3", 8080));
    server.put(poison("crlf", "evil\r\nX: y", "10.0.0.4", 8080));
    server.put(poison("loop", "127.0.0.1", "127.0.0.1", 8080));
    let mut big_port = poison("port70000", "10.0.0.5", "10.0.0.5", 1);
    server.put(big_port.clone());
    big_port.instance_id = Some("unused".into());
    server.set_full_override(Some(
        server
            .registry()
            .to_json()
            .replace(r#"{"$":1,"#, r#"{"$":70000,"#),
    ));

    let eureka = builder(&server)
        .allow_loopback(false)
        .start()
        .await
        .unwrap();
    assert_eq!(ids(&eureka.instances("orders").unwrap()), ["good"]);
    let lenient = builder(&server).start().await.unwrap();
    assert_eq!(
        ids(&lenient.instances("orders").unwrap()),
        ["good", "loop"],
        "loopback allowed by default"
    );
    sleep(Duration::from_secs(120)).await;
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "URL fields are never dereferenced"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_sudden_mass_disappearance_is_held_for_one_fetch() {
    let server = FakeEureka::start().await;
    for n in 1..=10 {
        server.put(instance("orders", n));
    }
    let eureka = builder(&server).disable_delta(true).start().await.unwrap();
    assert_eq!(eureka.instances("orders").unwrap().len(), 10);
    // The restarted server knows only 3 of them.
    for n in 4..=10 {
        server.remove("orders", &format!("orders-{n}"));
    }
    eureka.refresh().await.unwrap();
    assert_eq!(
        eureka.instances("orders").unwrap().len(),
        10,
        "held back once"
    );
    eureka.refresh().await.unwrap();
    assert_eq!(
        eureka.instances("orders").unwrap().len(),
        3,
        "confirmed, applied"
    );

    let strict = builder(&server).drop_guard(false).start().await.unwrap();
    server.forget_all();
    strict.refresh().await.unwrap();
    assert!(
        strict.instances("orders").is_none(),
        "guard off: applied at once"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn an_admin_override_takes_the_instance_out_of_rotation() {
    let server = FakeEureka::start().await;
    let eureka = builder(&server)
        .instance(
            feign_eureka::InstanceConfig::new("orders", 8080)
                .host_name("10.0.0.7")
                .ip_address("10.0.0.7")
                .instance_id("orders-7"),
        )
        .registration_jitter(Duration::ZERO)
        .start()
        .await
        .unwrap();
    server.wait_for("POST", "/eureka/apps/ORDERS", 1).await;
    eureka.refresh().await.unwrap();
    assert_eq!(eureka.remote_status(), Some(InstanceStatus::Up));
    assert_eq!(ids(&eureka.instances("orders").unwrap()), ["orders-7"]);
    // An administrator overrides the status on the server.
    let mut overridden = server.instance("ORDERS", "orders-7").unwrap();
    overridden.status = InstanceStatus::OutOfService;
    overridden.overridden_status = InstanceStatus::OutOfService;
    server.put(overridden);
    eureka.refresh().await.unwrap();
    assert_eq!(eureka.remote_status(), Some(InstanceStatus::OutOfService));
    assert!(eureka.instances("orders").unwrap().is_empty());
    assert_eq!(
        eureka.status(),
        Some(InstanceStatus::Up),
        "the local status is not changed"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_backup_registry_serves_until_the_first_successful_fetch() {
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    server.put(instance("orders", 2));
    server.set_mode(Mode::DropConnections);
    let dir = TempDir::new("eureka-backup");
    let listing = Applications::new(vec![Application::new(
        "payments",
        vec![instance("payments", 7)],
    )]);
    let saved = dir.write("saved-registry.json", &listing.to_json());
    let mut down = instance("orders", 8);
    down.status = InstanceStatus::Down;
    let backup = BackupRegistry::new()
        .file(&saved)
        .instances([instance("orders", 9), down]);

    let eureka = builder(&server)
        .backup_registry(backup)
        .start()
        .await
        .unwrap();
    drop(dir);
    let supplier = eureka.supplier();
    assert_eq!(ids(&supplier.instances("orders").unwrap()), ["orders-9"]);
    assert_eq!(
        ids(&supplier.instances("PAYMENTS").unwrap()),
        ["payments-7"]
    );
    assert_eq!(
        eureka.instance_count(),
        3,
        "the DOWN one is held, not routed"
    );
    assert_eq!(eureka.staleness(), None, "a backup is not a fetch");

    // Eureka comes up: the next scheduled fetch replaces the backup entirely.
    server.set_mode(Mode::Normal);
    let seen = supplier.version();
    sleep(Duration::from_secs(31)).await;
    assert!(supplier.version() > seen);
    assert_eq!(
        ids(&supplier.instances("orders").unwrap()),
        ["orders-1", "orders-2"]
    );
    assert!(supplier.instances("payments").is_none());
    assert!(eureka.staleness().is_some());

    // The backup never comes back: a later outage keeps the fetched registry.
    server.set_mode(Mode::DropConnections);
    sleep(Duration::from_secs(600)).await;
    assert_eq!(
        ids(&supplier.instances("orders").unwrap()),
        ["orders-1", "orders-2"]
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_backup_registry_that_loads_lets_an_enforced_start_through() {
    let url = closed_url();
    let eureka = EurekaClient::builder()
        .service_urls([url.clone()])
        .enforce_fetch_at_init(true)
        .backup_registry(BackupRegistry::new().instances([instance("orders", 1)]))
        .start()
        .await
        .unwrap();
    assert_eq!(ids(&eureka.instances("orders").unwrap()), ["orders-1"]);

    // A backup file that is missing or not a registry: enforced starts fail, others start empty.
    let dir = TempDir::new("eureka-backup");
    let junk = dir.write("junk-registry.json", "<applications/>");
    for path in [dir.0.join("missing-registry.json"), junk] {
        assert_enforced_start_fails(
            EurekaClient::builder()
                .service_urls([url.clone()])
                .backup_registry(BackupRegistry::new().file(&path)),
        )
        .await;
        let eureka = EurekaClient::builder()
            .service_urls([url.clone()])
            .backup_registry(BackupRegistry::new().file(&path))
            .start()
            .await
            .unwrap();
        assert!(eureka.instances("orders").is_none());
    }
}
