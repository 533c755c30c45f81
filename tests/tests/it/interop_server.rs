//! Java against the embedded registry: the Spring Boot Eureka client app (`java-svc`) registers
//! with it, heartbeats, is listed, sees a Rust registration through its `DiscoveryClient`, and
//! deregisters on shutdown. Needs the Java fixtures, so
//! ignored unless asked for (`-- --ignored`, as `.ci/run` runs them).

use std::thread;
use std::time::{Duration, Instant};

use feign_eureka::model::{Applications, InstanceStatus};
use feign_eureka::{EurekaClient, InstanceConfig};
use feign_eureka_server::EurekaServer;
use feign_tests::interop::{http_get, JavaApp};
use serde_json::Value;

/// Polls until `check` holds or `timeout` passes.
fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        thread::sleep(Duration::from_millis(250));
    }
    false
}

/// The registry as a Rust reader sees it.
fn fetch(eureka_url: &str) -> Applications {
    let response = http_get(&format!("{eureka_url}apps/")).expect("GET apps/");
    assert_eq!(response.status, 200, "{}", response.text());
    Applications::from_json(&response.body).expect("registry parses")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn spring_boot_registers_with_the_embedded_registry_and_discovers_rust() {
    let server = EurekaServer::builder()
        .bind("127.0.0.1:0")
        .self_preservation(false)
        .read_only_cache(false)
        .start()
        .await
        .expect("registry starts");
    let eureka_url = server.url().to_owned();
    let rust_port = 19_000;
    let rust = EurekaClient::builder()
        .service_urls([eureka_url.as_str()])
        .instance(
            InstanceConfig::new("rust-svc", rust_port)
                .host_name("127.0.0.1")
                .ip_address("127.0.0.1")
                .vip_address("rust-svc"),
        )
        .registration_jitter(Duration::ZERO)
        .registry_fetch_interval(Duration::from_secs(1))
        .allow_loopback(true)
        .start()
        .await
        .expect("rust client starts");
    let discovering = rust.clone();
    tokio::task::spawn_blocking(move || {
        let svc = JavaApp::java_svc(&eureka_url, &[]).expect("the Java fixtures");
        let java_id = format!("java-svc:{}", svc.port());
        let listed = eventually(Duration::from_secs(30), || {
            let apps = fetch(&eureka_url);
            apps.application("java-svc").is_some_and(|app| {
                app.instances.iter().any(|i| {
                    i.id() == java_id
                        && i.status == InstanceStatus::Up
                        && i.port.port == svc.port()
                        && i.vip_address.as_deref() == Some("java-svc")
                })
            })
        });
        assert!(
            listed,
            "java-svc never appeared UP; log: {}",
            svc.log_path().display()
        );
        // Its heartbeats reach the registry.
        let renewed = eventually(Duration::from_secs(20), || {
            let doc = http_get(&format!("{eureka_url}apps/JAVA-SVC/{java_id}")).expect("GET");
            let json: Value = serde_json::from_slice(&doc.body).unwrap_or(Value::Null);
            let lease = &json["instance"]["leaseInfo"];
            lease["lastRenewalTimestamp"].as_u64() > lease["registrationTimestamp"].as_u64()
        });
        assert!(renewed, "no heartbeat from java-svc");

        // Our client discovers the Java app...
        let seen = eventually(Duration::from_secs(20), || {
            discovering
                .applications()
                .application("JAVA-SVC")
                .is_some_and(|app| {
                    app.instances
                        .iter()
                        .any(|i| i.id() == java_id && i.status == InstanceStatus::Up)
                })
        });
        assert!(seen, "the Rust client never discovered java-svc");
        // ...and the Java app's DiscoveryClient discovers the Rust registration.
        let expected = format!("http://127.0.0.1:{rust_port}");
        let discovered = eventually(Duration::from_secs(30), || {
            http_get(&format!("{}/peers/rust-svc", svc.base_url()))
                .ok()
                .and_then(|r| serde_json::from_slice::<Vec<String>>(&r.body).ok())
                .is_some_and(|uris| uris.contains(&expected))
        });
        assert!(discovered, "java-svc's DiscoveryClient never saw rust-svc");

        // Shutting down, the Spring app cancels its lease.
        svc.stop();
        let gone = eventually(Duration::from_secs(20), || {
            fetch(&eureka_url).application("java-svc").is_none()
        });
        assert!(gone, "java-svc did not deregister");
    })
    .await
    .expect("interop checks");
    rust.shutdown().await;
    server.shutdown().await;
}
