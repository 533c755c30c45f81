//! The embedded registry and a real Spring Cloud Netflix Eureka server as peers of each other:
//! registrations, heartbeats, status overrides and their removal (with and without
//! `lastDirtyTimestamp`), metadata changes, cancellation, a conflict the newer copy wins, and a
//! restart of the embedded node all converge within seconds, in both directions. Needs the
//! Java fixtures, so ignored unless asked for (`-- --ignored`, as `.ci/run` runs them).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use feign_eureka::model::{Applications, InstanceInfo};
use feign_eureka_server::EurekaServer;
use feign_test_support::free_port;
use feign_tests::interop::{http_request, JavaApp};

/// How long a change may take to reach the other node.
const CONVERGENCE: Duration = Duration::from_secs(15);

fn now_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(since.as_millis()).unwrap()
}

/// Sends `method url` off the runtime's threads; returns the status.
async fn send(method: &'static str, url: String, body: Option<String>) -> u16 {
    tokio::task::spawn_blocking(move || {
        let headers = [
            ("Accept", "application/json"),
            ("Content-Type", "application/json"),
        ];
        let response = http_request(method, &url, &headers, body.as_deref().map(str::as_bytes));
        response.map_or(0, |r| r.status)
    })
    .await
    .unwrap()
}

/// The registry of the node at `eureka_url`.
async fn registry(eureka_url: &str) -> Applications {
    let url = format!("{eureka_url}apps/");
    let body = tokio::task::spawn_blocking(move || {
        http_request("GET", &url, &[("Accept", "application/json")], None)
            .expect("the node answers")
            .body
    })
    .await
    .unwrap();
    Applications::from_json(&body).expect("a registry")
}

/// The instance `app`/`id` as the node at `eureka_url` lists it.
async fn listed(eureka_url: &str, app: &str, id: &str) -> Option<InstanceInfo> {
    let apps = registry(eureka_url).await;
    let app = apps.application(app)?;
    app.instances.iter().find(|i| i.id() == id).cloned()
}

/// Waits until `check` holds for the instance on the node at `eureka_url`; returns how long it
/// took.
async fn converges(
    eureka_url: &str,
    app: &str,
    id: &str,
    what: &str,
    check: impl Fn(Option<&InstanceInfo>) -> bool,
) -> Duration {
    let started = Instant::now();
    loop {
        let instance = listed(eureka_url, app, id).await;
        if check(instance.as_ref()) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < CONVERGENCE,
            "{what} did not reach {eureka_url} within {CONVERGENCE:?}: {instance:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn status_is(status: &'static str) -> impl Fn(Option<&InstanceInfo>) -> bool {
    move |i| i.is_some_and(|i| i.status.as_str() == status)
}

fn metadata_is(key: &'static str, value: &'static str) -> impl Fn(Option<&InstanceInfo>) -> bool {
    move |i| i.is_some_and(|i| i.metadata.get(key).map(String::as_str) == Some(value))
}

/// A registration body for `app`/`id` on 127.0.0.1 with metadata `version`.
fn registration(app: &str, id: &str, ldt: u64, version: &str) -> String {
    let mut info = InstanceInfo::new(app, "127.0.0.1", "127.0.0.1", 8080);
    info.instance_id = Some(id.to_owned());
    info.vip_address = Some(app.to_ascii_lowercase());
    info.last_dirty_timestamp = Some(ldt);
    info.metadata
        .insert("version".to_owned(), version.to_owned());
    info.to_json()
}

/// The embedded node on `port`, with the real server as its peer.
async fn embedded(port: u16, peer: &str) -> EurekaServer {
    EurekaServer::builder()
        .bind(format!("127.0.0.1:{port}"))
        .self_preservation(false)
        .read_only_cache(false)
        .replication_delay(Duration::from_millis(50))
        .peer(peer)
        .start()
        .await
        .expect("the embedded node starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn the_embedded_registry_and_a_real_server_converge_as_peers() {
    let port = free_port();
    let ours = format!("http://127.0.0.1:{port}/eureka/");
    let peer_arg = format!("--eureka.client.service-url.defaultZone={ours}");
    let java = tokio::task::spawn_blocking(move || JavaApp::eureka_server(&[&peer_arg]))
        .await
        .unwrap()
        .expect("the Java fixtures");
    let real = java.eureka_url();
    let node = embedded(port, &real).await;
    let ldt = now_ms();
    let mut took = Vec::new();

    // Registered on either node, listed on the other.
    let body = registration("CLUSTER-A", "x-1", ldt, "1");
    assert_eq!(
        send("POST", format!("{ours}apps/CLUSTER-A"), Some(body)).await,
        204
    );
    took.push(converges(&real, "CLUSTER-A", "x-1", "a registration", status_is("UP")).await);
    let body = registration("CLUSTER-B", "y-1", ldt, "1");
    assert_eq!(
        send("POST", format!("{real}apps/CLUSTER-B"), Some(body)).await,
        204
    );
    took.push(converges(&ours, "CLUSTER-B", "y-1", "a registration", status_is("UP")).await);

    // Heartbeats on both sides are taken by both.
    for url in [
        format!("{ours}apps/CLUSTER-A/x-1"),
        format!("{real}apps/CLUSTER-B/y-1"),
    ] {
        assert_eq!(send("PUT", url, None).await, 200);
    }

    // An override and its removal without lastDirtyTimestamp, set on the embedded node.
    let status = format!("{ours}apps/CLUSTER-A/x-1/status");
    assert_eq!(
        send("PUT", format!("{status}?value=OUT_OF_SERVICE"), None).await,
        200
    );
    let out = status_is("OUT_OF_SERVICE");
    took.push(converges(&real, "CLUSTER-A", "x-1", "an override", &out).await);
    assert_eq!(
        send("DELETE", format!("{status}?value=UP"), None).await,
        200
    );
    took.push(
        converges(
            &real,
            "CLUSTER-A",
            "x-1",
            "a removed override",
            status_is("UP"),
        )
        .await,
    );

    // The same with lastDirtyTimestamp, set on the real server.
    let status = format!("{real}apps/CLUSTER-B/y-1/status");
    let stamp = format!("lastDirtyTimestamp={ldt}");
    let set = format!("{status}?value=OUT_OF_SERVICE&{stamp}");
    assert_eq!(send("PUT", set, None).await, 200);
    took.push(converges(&ours, "CLUSTER-B", "y-1", "an override", &out).await);
    assert_eq!(
        send("DELETE", format!("{status}?value=UP&{stamp}"), None).await,
        200
    );
    took.push(
        converges(
            &ours,
            "CLUSTER-B",
            "y-1",
            "a removed override",
            status_is("UP"),
        )
        .await,
    );

    // Metadata changed on either node.
    let changed = send(
        "PUT",
        format!("{ours}apps/CLUSTER-A/x-1/metadata?team=orders"),
        None,
    );
    assert_eq!(changed.await, 200);
    let team = metadata_is("team", "orders");
    took.push(converges(&real, "CLUSTER-A", "x-1", "a metadata change", &team).await);
    let changed = send(
        "PUT",
        format!("{real}apps/CLUSTER-B/y-1/metadata?team=orders"),
        None,
    );
    assert_eq!(changed.await, 200);
    took.push(converges(&ours, "CLUSTER-B", "y-1", "a metadata change", &team).await);

    // A conflict: the same instance registered on both, the embedded copy newer. Both nodes end
    // with the newer copy, whichever order the replications cross in.
    let older = registration("CLUSTER-C", "z-1", ldt, "old");
    assert_eq!(
        send("POST", format!("{real}apps/CLUSTER-C"), Some(older)).await,
        204
    );
    let newer = registration("CLUSTER-C", "z-1", ldt + 1_000, "new");
    assert_eq!(
        send("POST", format!("{ours}apps/CLUSTER-C"), Some(newer)).await,
        204
    );
    assert_eq!(
        send("PUT", format!("{real}apps/CLUSTER-C/z-1"), None).await,
        200
    );
    let new = metadata_is("version", "new");
    took.push(converges(&real, "CLUSTER-C", "z-1", "the newer copy", &new).await);
    took.push(converges(&ours, "CLUSTER-C", "z-1", "the newer copy", &new).await);

    // Cancelled on the real server, gone from the embedded node.
    assert_eq!(
        send("DELETE", format!("{real}apps/CLUSTER-A/x-1"), None).await,
        200
    );
    let gone = |i: Option<&InstanceInfo>| i.is_none();
    took.push(converges(&ours, "CLUSTER-A", "x-1", "a cancel", gone).await);

    // The embedded node restarts: it copies the real server's registry before it serves, and
    // replicates again.
    node.shutdown().await;
    let node = embedded(port, &real).await;
    assert!(
        listed(&ours, "CLUSTER-B", "y-1").await.is_some(),
        "copied at start"
    );
    assert!(
        new(listed(&ours, "CLUSTER-C", "z-1").await.as_ref()),
        "copied at start"
    );
    let body = registration("CLUSTER-D", "w-1", now_ms(), "1");
    assert_eq!(
        send("POST", format!("{ours}apps/CLUSTER-D"), Some(body)).await,
        204
    );
    took.push(converges(&real, "CLUSTER-D", "w-1", "a registration", status_is("UP")).await);

    let slowest = took.iter().max().unwrap();
    println!("changes converged in at most {slowest:?}: {took:?}");
    node.shutdown().await;
    tokio::task::spawn_blocking(move || java.stop())
        .await
        .unwrap();
}
