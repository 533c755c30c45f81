//! The feign-eureka client against a real Spring Cloud Netflix Eureka server (and a Spring Boot
//! Eureka client app): the interop scenarios of the protocol notes (§6.7). Needs the Java
//! fixtures, so ignored unless asked for (`-- --ignored`, as `.ci/run` runs them).

use std::future::Future;
use std::time::{Duration, Instant};

use feign_eureka::model::{Application, Applications, InstanceStatus};
use feign_eureka::{EurekaClient, InstanceConfig};
use feign_lb::InstanceSupplier;
use feign_tests::interop::{http_get, http_request, JavaApp};

/// Waits until `check` holds, polling every 250 ms for at most `timeout`.
async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("timed out after {timeout:?} waiting until {what}");
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.expect("blocking task")
}

async fn get(url: String) -> (u16, Vec<u8>) {
    blocking(move || {
        http_get(&url)
            .map(|r| (r.status, r.body))
            .unwrap_or((0, Vec::new()))
    })
    .await
}

async fn server_registry(eureka_url: &str) -> Applications {
    let (status, body) = get(format!("{eureka_url}apps")).await;
    assert_eq!(status, 200);
    Applications::from_json(&body).expect("the Spring server's registry parses")
}

async fn server_app(eureka_url: &str, app: &str) -> Option<Application> {
    let (status, body) = get(format!("{eureka_url}apps/{app}")).await;
    (status == 200)
        .then(|| Application::from_json(&body).expect("the Spring server's application parses"))
}

/// A Rust service on 127.0.0.1 with a 1 s heartbeat and a 2 s lease.
fn rust_instance(app: &str, port: u16) -> InstanceConfig {
    InstanceConfig::new(app, port)
        .host_name("127.0.0.1")
        .ip_address("127.0.0.1")
        .metadata("zone", "zone-a")
        .metadata("version", "1.2.3")
        .lease_renewal_interval(Duration::from_secs(1))
        .lease_expiration_duration(Duration::from_secs(2))
}

async fn start_client(eureka_url: &str, instance: Option<InstanceConfig>) -> EurekaClient {
    let mut builder = EurekaClient::builder()
        .service_urls([eureka_url])
        .registry_fetch_interval(Duration::from_secs(1))
        .registration_jitter(Duration::ZERO);
    if let Some(instance) = instance {
        builder = builder.instance(instance);
    }
    builder.start().await.expect("client starts")
}

/// §6.7 (1) and (2): a Rust registration is visible to the server and to a Spring Boot Eureka
/// client (by VIP); a Java-registered instance is discovered by Rust with the right host, port
/// and metadata; after the Java app stops, the Rust delta shows the removal and the hash matches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn rust_and_java_see_each_other_and_removals_arrive_by_delta() {
    let server = blocking(JavaApp::shared_eureka_server)
        .await
        .expect("the Java fixtures");
    let url = server.eureka_url();
    let rust = start_client(&url, Some(rust_instance("rust-svc", 9000))).await;

    eventually(
        "RUST-SVC is registered",
        Duration::from_secs(20),
        || async {
            server_app(&url, "RUST-SVC").await.is_some_and(|app| {
                let i = &app.instances[0];
                i.id() == "127.0.0.1:rust-svc:9000"
                    && i.status == InstanceStatus::Up
                    && i.metadata.get("zone").map(String::as_str) == Some("zone-a")
                    && i.vip_address.as_deref() == Some("rust-svc")
            })
        },
    )
    .await;

    let java_url = url.clone();
    let java = blocking(move || JavaApp::java_svc(&java_url, &[]))
        .await
        .expect("the Java fixtures");
    let peers = format!("{}/peers/rust-svc", java.base_url());
    eventually(
        "java-svc discovers rust-svc by VIP",
        Duration::from_secs(30),
        || {
            let peers = peers.clone();
            async move {
                let (status, body) = get(peers).await;
                status == 200 && String::from_utf8_lossy(&body).contains("http://127.0.0.1:9000")
            }
        },
    )
    .await;

    let java_port = java.port();
    eventually(
        "Rust discovers JAVA-SVC",
        Duration::from_secs(30),
        || async {
            rust.supplier()
                .instances("java-svc")
                .is_some_and(|list| list.len() == 1)
        },
    )
    .await;
    let found = rust.supplier().instances("JAVA-SVC").unwrap()[0].clone();
    assert_eq!(found.host(), "127.0.0.1");
    assert_eq!(found.port(), java_port);
    assert_eq!(found.instance_id(), format!("java-svc:{java_port}"));
    assert!(!found.is_secure());
    assert_eq!(
        found.metadata().get("management.port"),
        Some(&java_port.to_string())
    );

    // The Java app deregisters on a graceful stop; the next Rust delta removes it.
    let version = rust.supplier().version();
    blocking(move || java.stop()).await;
    eventually(
        "the removal reaches Rust",
        Duration::from_secs(30),
        || async {
            rust.supplier()
                .instances("java-svc")
                .is_none_or(|list| list.is_empty())
        },
    )
    .await;
    assert!(rust.supplier().version() > version);
    let server_hash = server_registry(&url).await.apps_hashcode;
    rust.refresh().await.unwrap();
    assert_eq!(rust.registry_hash_code(), server_hash);

    rust.shutdown().await;
    eventually(
        "RUST-SVC is deregistered",
        Duration::from_secs(10),
        || async { server_app(&url, "RUST-SVC").await.is_none() },
    )
    .await;
}

/// §6.7 (3): an instance that stops without deregistering is evicted; a new process with the
/// same id registers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn a_killed_instance_is_evicted_and_comes_back_when_restarted() {
    let server = blocking(JavaApp::shared_eureka_server)
        .await
        .expect("the Java fixtures");
    let url = server.eureka_url();
    let rust = start_client(&url, Some(rust_instance("rust-evicted", 9001))).await;
    eventually("registered", Duration::from_secs(20), || async {
        server_app(&url, "RUST-EVICTED").await.is_some()
    })
    .await;
    drop(rust); // no deregistration: heartbeats just stop
    eventually(
        "evicted after ~2 × lease",
        Duration::from_secs(30),
        || async { server_app(&url, "RUST-EVICTED").await.is_none() },
    )
    .await;
    let again = start_client(&url, Some(rust_instance("rust-evicted", 9001))).await;
    eventually("registered again", Duration::from_secs(20), || async {
        server_app(&url, "RUST-EVICTED")
            .await
            .is_some_and(|a| a.instances[0].status == InstanceStatus::Up)
    })
    .await;
    again.shutdown().await;
}

/// §6.7 (4): after a server restart (empty registry) the next heartbeat gets 404 and the client
/// registers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn a_restarted_server_gets_the_registration_back_after_the_next_heartbeat() {
    let mut server = blocking(|| JavaApp::eureka_server(&[]))
        .await
        .expect("the Java fixtures");
    let url = server.eureka_url();
    let rust = start_client(&url, Some(rust_instance("rust-restart", 9002))).await;
    eventually("registered", Duration::from_secs(20), || async {
        server_app(&url, "RUST-RESTART").await.is_some()
    })
    .await;
    let server = blocking(move || {
        server.restart();
        server
    })
    .await;
    eventually(
        "re-registered after the restart",
        Duration::from_secs(30),
        || async { server_app(&url, "RUST-RESTART").await.is_some() },
    )
    .await;
    assert!(rust.is_registered());
    // Discovery recovered as well.
    eventually(
        "the registry is fetched again",
        Duration::from_secs(10),
        || async {
            rust.refresh().await.is_ok()
                && rust.instances("rust-restart").is_some_and(|l| l.len() == 1)
        },
    )
    .await;
    rust.shutdown().await;
    drop(server);
}

/// §6.7 (5): an administrator's OUT_OF_SERVICE override takes the instance out of the routable
/// set; removing the override brings it back (the heartbeat gets 404, the client re-registers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn an_admin_override_takes_the_instance_out_and_back() {
    let server = blocking(JavaApp::shared_eureka_server)
        .await
        .expect("the Java fixtures");
    let url = server.eureka_url();
    let rust = start_client(&url, Some(rust_instance("rust-oos", 9003))).await;
    eventually("routable", Duration::from_secs(20), || async {
        rust.instances("rust-oos").is_some_and(|l| l.len() == 1)
    })
    .await;
    let status_url = format!("{url}apps/RUST-OOS/127.0.0.1:rust-oos:9003/status");
    let put = status_url.clone() + "?value=OUT_OF_SERVICE";
    let answer = blocking(move || http_request("PUT", &put, &[], None).unwrap().status).await;
    assert_eq!(answer, 200);
    eventually(
        "out of the routable set",
        Duration::from_secs(20),
        || async {
            rust.remote_status() == Some(InstanceStatus::OutOfService)
                && rust.instances("rust-oos").is_some_and(|l| l.is_empty())
        },
    )
    .await;
    // Re-registering UP does not beat the override. The local status is still UP (setting it
    // again sends nothing), so go through DOWN (which the server shows despite the override)
    // and back to UP, and look only once the UP registration has reached the server: its
    // lastDirtyTimestamp moved past DOWN's.
    let dirty = |url: String| async move {
        server_app(&url, "RUST-OOS")
            .await
            .and_then(|a| a.instances[0].last_dirty_timestamp)
    };
    rust.set_status(InstanceStatus::Down);
    eventually("DOWN re-registered", Duration::from_secs(20), || async {
        server_app(&url, "RUST-OOS")
            .await
            .is_some_and(|a| a.instances[0].status == InstanceStatus::Down)
    })
    .await;
    let down = dirty(url.clone()).await;
    assert!(down.is_some(), "the server keeps a lastDirtyTimestamp");
    rust.set_status(InstanceStatus::Up);
    eventually(
        "the UP re-registration reached the server",
        Duration::from_secs(20),
        || async { dirty(url.clone()).await > down },
    )
    .await;
    assert_eq!(
        server_app(&url, "RUST-OOS").await.unwrap().instances[0].status,
        InstanceStatus::OutOfService
    );

    let answer = blocking(move || {
        http_request("DELETE", &status_url, &[], None)
            .unwrap()
            .status
    })
    .await;
    assert_eq!(answer, 200);
    eventually(
        "back in the routable set",
        Duration::from_secs(20),
        || async {
            rust.remote_status() == Some(InstanceStatus::Up)
                && rust.instances("rust-oos").is_some_and(|l| l.len() == 1)
        },
    )
    .await;
    rust.shutdown().await;
}

/// §6.7 (6): a status change is sent by re-registering; the registry shows DOWN and the Rust
/// client's hash matches the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn a_status_change_by_re_registration_shows_in_the_registry_and_hash() {
    let server = blocking(JavaApp::shared_eureka_server)
        .await
        .expect("the Java fixtures");
    let url = server.eureka_url();
    let rust = start_client(&url, Some(rust_instance("rust-down", 9004))).await;
    eventually("registered UP", Duration::from_secs(20), || async {
        server_app(&url, "RUST-DOWN")
            .await
            .is_some_and(|a| a.instances[0].status == InstanceStatus::Up)
    })
    .await;
    rust.set_status(InstanceStatus::Down);
    eventually("DOWN on the server", Duration::from_secs(20), || async {
        server_app(&url, "RUST-DOWN")
            .await
            .is_some_and(|a| a.instances[0].status == InstanceStatus::Down)
    })
    .await;
    eventually(
        "the Rust registry agrees with the server",
        Duration::from_secs(20),
        || async {
            let server_hash = server_registry(&url).await.apps_hashcode;
            rust.refresh().await.is_ok()
                && rust.registry_hash_code() == server_hash
                && rust.remote_status() == Some(InstanceStatus::Down)
        },
    )
    .await;
    assert!(
        rust.registry_hash_code().contains("DOWN_"),
        "{}",
        rust.registry_hash_code()
    );
    assert!(
        rust.instances("rust-down").is_some_and(|l| l.is_empty()),
        "DOWN is not routable"
    );
    rust.set_status(InstanceStatus::Up);
    eventually("UP again", Duration::from_secs(20), || async {
        server_app(&url, "RUST-DOWN")
            .await
            .is_some_and(|a| a.instances[0].status == InstanceStatus::Up)
    })
    .await;
    rust.shutdown().await;
}

/// Discovery only, and a registry document from the real server parses as a whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn a_discovery_only_client_reads_the_real_registry() {
    let server = blocking(JavaApp::shared_eureka_server)
        .await
        .expect("the Java fixtures");
    let url = server.eureka_url();
    let registrant = start_client(&url, Some(rust_instance("rust-discovered", 9005))).await;
    let reader = start_client(&url, None).await;
    eventually("discovered", Duration::from_secs(20), || async {
        reader.refresh().await.is_ok()
            && reader
                .instances("RUST-DISCOVERED")
                .is_some_and(|l| l.len() == 1)
    })
    .await;
    let found = reader.instances("rust-discovered").unwrap()[0].clone();
    assert_eq!(found.base_url().as_ref(), "http://127.0.0.1:9005");
    assert_eq!(found.zone(), Some("zone-a"));
    assert_eq!(
        found.metadata().get("version").map(String::as_str),
        Some("1.2.3")
    );
    assert_eq!(reader.instance_id(), None);
    registrant.shutdown().await;
    reader.shutdown().await;
}

/// Push discovery against a server that does not offer it: the real server's fetches carry no
/// offer, so a client with the watch on never asks for it and polls exactly as without it,
/// seeing registrations and deregistrations at its fetch interval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn a_watching_client_polls_the_real_server_as_before() {
    let server = blocking(JavaApp::shared_eureka_server)
        .await
        .expect("the Java fixtures");
    let url = server.eureka_url();
    let fetch = blocking({
        let url = url.clone();
        move || http_get(&format!("{url}apps/")).expect("the real server answers")
    })
    .await;
    assert_eq!(fetch.status, 200);
    assert!(
        !fetch
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("x-feign-watch")),
        "the real server offers no watch"
    );
    let reader = EurekaClient::builder()
        .service_urls([url.as_str()])
        .registry_fetch_interval(Duration::from_secs(1))
        .watch(true)
        .start()
        .await
        .expect("client starts");
    let registrant = start_client(&url, Some(rust_instance("rust-watched", 9006))).await;
    eventually(
        "the registration is polled",
        Duration::from_secs(30),
        || async {
            reader
                .instances("RUST-WATCHED")
                .is_some_and(|l| l.len() == 1)
        },
    )
    .await;
    registrant.shutdown().await;
    eventually(
        "the deregistration is polled",
        Duration::from_secs(30),
        || async {
            reader
                .instances("RUST-WATCHED")
                .is_none_or(|l| l.is_empty())
        },
    )
    .await;
    assert!(
        reader
            .staleness()
            .is_some_and(|s| s < Duration::from_secs(5)),
        "the client keeps fetching"
    );
    reader.shutdown().await;
}
