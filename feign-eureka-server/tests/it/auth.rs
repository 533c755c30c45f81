//! A registry behind basic auth, and replication taken only from configured peers: requests
//! without the credentials, or with wrong ones, get 401 as from Spring Security on every
//! endpoint (each write and read under `/eureka/` and `/eureka/v2/`, the watch, the dashboard)
//! and change nothing; our Eureka client and peers send the credentials their URLs hold, a batch
//! from anywhere else is refused, and replicated registrations count against the registration
//! limit.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::client::{client, eventually};
use crate::support::{dev, http, http_builder, instance};

const USER: &str = "eureka";
const PASSWORD: &str = "s3cret-pw";

/// `base` (`http://127.0.0.1:port/eureka/`) with the credentials in it.
fn with_credentials(base: &str, password: &str) -> String {
    base.replacen("http://", &format!("http://{USER}:{password}@"), 1)
}

#[tokio::test]
async fn a_registry_with_credentials_answers_only_requests_that_carry_them() {
    let server = dev().credentials(USER, PASSWORD).start().await.unwrap();
    let base = server.url();
    let root = base.trim_end_matches("eureka/");
    for url in [format!("{base}apps/"), root.to_owned()] {
        let response = http().get(&url).send().await.unwrap();
        assert_eq!(response.status(), 401, "{url}");
        assert_eq!(
            response.headers()["www-authenticate"],
            "Basic realm=\"Realm\"",
            "{url}"
        );
        let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
        assert_eq!(body["error"], "Unauthorized");
        let wrong = http()
            .get(&url)
            .basic_auth(USER, Some("guess"))
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 401, "{url}");
        let right = http()
            .get(&url)
            .basic_auth(USER, Some(PASSWORD))
            .send()
            .await
            .unwrap();
        assert_eq!(right.status(), 200, "{url}");
    }
    server.shutdown().await;
}

/// `lastDirtyTimestamp` of the instance the auth tests register.
const LDT: u64 = 1_732_881_099_990;

/// Every request of the API, each path relative to a prefix (`/eureka/` or `/eureka/v2/`),
/// about the registered instance `A/a-1`: its method, path and JSON body.
fn api_requests() -> Vec<(Method, String, Option<Value>)> {
    let batch = json!({ "replicationList": [{
        "appName": "A", "id": "a-1", "lastDirtyTimestamp": LDT, "status": "UP", "action": "Cancel",
    }]});
    vec![
        (
            Method::POST,
            "apps/A".into(),
            Some(instance("A", "a-2", 8081, "UP", LDT)),
        ),
        (
            Method::PUT,
            format!("apps/A/a-1?status=UP&lastDirtyTimestamp={LDT}"),
            None,
        ),
        (Method::DELETE, "apps/A/a-1".into(), None),
        (
            Method::PUT,
            "apps/A/a-1/status?value=OUT_OF_SERVICE".into(),
            None,
        ),
        (Method::DELETE, "apps/A/a-1/status?value=UP".into(), None),
        (
            Method::PUT,
            "apps/A/a-1/metadata?team=intruders".into(),
            None,
        ),
        (Method::POST, "peerreplication/batch/".into(), Some(batch)),
        (Method::GET, "watch".into(), None),
        (Method::GET, "apps/".into(), None),
        (Method::GET, "apps/delta".into(), None),
        (Method::GET, "apps/A".into(), None),
        (Method::GET, "apps/A/a-1".into(), None),
        (Method::GET, "instances/a-1".into(), None),
        (Method::GET, "vips/a".into(), None),
        (Method::GET, "svips/a".into(), None),
    ]
}

/// Sends `method url` with `body`, and with `credentials` when given.
async fn send(
    method: Method,
    url: &str,
    body: Option<&Value>,
    credentials: Option<(&str, &str)>,
) -> reqwest::Response {
    send_with(&http(), method, url, body, credentials).await
}

/// [`send`] through `client`.
async fn send_with(
    client: &reqwest::Client,
    method: Method,
    url: &str,
    body: Option<&Value>,
    credentials: Option<(&str, &str)>,
) -> reqwest::Response {
    let mut request = client
        .request(method, url)
        .header("Accept", "application/json");
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/json")
            .body(body.to_string());
    }
    if let Some((user, password)) = credentials {
        request = request.basic_auth(user, Some(password));
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn every_endpoint_refuses_requests_without_or_with_wrong_credentials() {
    let peer = format!("{}/eureka/", feign_test_support::closed_port_url());
    let server = dev()
        .credentials(USER, PASSWORD)
        .peer(peer)
        .startup_sync(false)
        .start()
        .await
        .unwrap();
    let base = server.url().to_owned();
    let right = Some((USER, PASSWORD));
    let registered = send(
        Method::POST,
        &format!("{base}apps/A"),
        Some(&instance("A", "a-1", 8080, "UP", LDT)),
        right,
    )
    .await;
    assert_eq!(registered.status(), 204);

    let v2 = base.replacen("/eureka/", "/eureka/v2/", 1);
    let root = base.trim_end_matches("eureka/").to_owned();
    let mut requests: Vec<(Method, String, Option<Value>)> = Vec::new();
    for prefix in [&base, &v2] {
        for (method, path, body) in api_requests() {
            requests.push((method, format!("{prefix}{path}"), body));
        }
    }
    requests.push((Method::GET, root.clone(), None));
    requests.push((Method::GET, format!("{root}no-such-page"), None));
    // Each URL is tried from an address of its own (all of 127.0.0.0/8 is loopback), so that
    // the wrong credentials stay under the per-address throttle and each answer is the 401.
    for (n, (method, url, body)) in requests.iter().enumerate() {
        let from = IpAddr::V4(Ipv4Addr::new(127, 0, 1, n as u8 + 1));
        let client = http_builder().local_address(from).build().unwrap();
        for credentials in [None, Some((USER, "guess")), Some(("intruder", PASSWORD))] {
            let response =
                send_with(&client, method.clone(), url, body.as_ref(), credentials).await;
            let what = format!("{method} {url} with {credentials:?}");
            assert_eq!(response.status(), 401, "{what}");
            assert_eq!(
                response.headers()["www-authenticate"],
                "Basic realm=\"Realm\"",
                "{what}"
            );
        }
    }

    // Nothing changed: one instance, up, its metadata as registered.
    assert_eq!(server.instance_count(), 1);
    let read = send(Method::GET, &format!("{base}apps/A/a-1"), None, right).await;
    assert_eq!(read.status(), 200);
    let read: Value = serde_json::from_slice(&read.bytes().await.unwrap()).unwrap();
    assert_eq!(read["instance"]["status"], "UP");
    assert_eq!(read["instance"]["overriddenStatus"], "UNKNOWN");
    assert_eq!(read["instance"]["metadata"], json!({"zone": "zone-a"}));

    // The same writes with the credentials are carried out.
    for (method, path, expected) in [
        (Method::PUT, "apps/A/a-1/metadata?team=owners", 200),
        (Method::PUT, "apps/A/a-1/status?value=OUT_OF_SERVICE", 200),
        (Method::DELETE, "apps/A/a-1", 200),
    ] {
        let response = send(method.clone(), &format!("{v2}{path}"), None, right).await;
        assert_eq!(response.status(), expected, "{method} {path}");
    }
    assert_eq!(server.instance_count(), 0);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_registers_and_fetches_with_the_credentials_of_its_service_url() {
    let server = dev().credentials(USER, PASSWORD).start().await.unwrap();
    let url = with_credentials(server.url(), PASSWORD);
    let orders = client(&url, "orders", "orders-1", 8080).await;
    assert!(eventually(|| orders.is_registered()).await);
    orders.refresh().await.expect("an authenticated fetch");
    assert!(orders.applications().application("ORDERS").is_some());
    orders.shutdown().await;
    assert_eq!(
        server.instance_count(),
        0,
        "deregistered with the credentials too"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peers_replicate_with_the_credentials_their_urls_hold() {
    let first_port = feign_test_support::free_port();
    let first_url = format!("http://127.0.0.1:{first_port}/eureka/");
    let second = dev()
        .credentials(USER, PASSWORD)
        .peer(with_credentials(&first_url, PASSWORD))
        .replication_delay(Duration::from_millis(10))
        .start()
        .await
        .unwrap();
    let first = dev()
        .bind(format!("127.0.0.1:{first_port}"))
        .credentials(USER, PASSWORD)
        .peer(with_credentials(second.url(), PASSWORD))
        .replication_delay(Duration::from_millis(10))
        .start()
        .await
        .unwrap();
    let body = instance("A", "a-1", 8080, "UP", 1_732_881_099_990);
    let registered = http()
        .post(format!("{first_url}apps/A"))
        .basic_auth(USER, Some(PASSWORD))
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(registered.status(), 204);
    assert!(
        eventually(|| second.instance_count() == 1).await,
        "replicated"
    );

    // The dashboard names the peer without its password.
    let page = http()
        .get(first_url.trim_end_matches("eureka/"))
        .basic_auth(USER, Some(PASSWORD))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(&format!("{USER}:***@127.0.0.1")),
        "peer listed"
    );
    assert!(!page.contains(PASSWORD), "the password is not shown");
    first.shutdown().await;
    second.shutdown().await;
}

/// A `Register` item of a replication batch for app `A`.
fn register_item(n: usize) -> Value {
    let id = format!("a-{n}");
    let body = instance("A", &id, 8080, "UP", 1_732_881_099_990);
    json!({
        "appName": "A",
        "id": id,
        "lastDirtyTimestamp": 1_732_881_099_990u64,
        "status": "UP",
        "action": "Register",
        "instanceInfo": body["instance"],
    })
}

/// Posts a batch of `items` to `base` from the local address `from`; returns the status and
/// each item's status code.
async fn post_batch(base: &str, from: Ipv4Addr, items: Vec<Value>) -> (u16, Vec<u64>) {
    let client = reqwest::Client::builder()
        .local_address(IpAddr::V4(from))
        .build()
        .unwrap();
    let response = client
        .post(format!("{base}peerreplication/batch/"))
        .header("x-netflix-discovery-replication", "true")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(json!({ "replicationList": items }).to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: Value =
        serde_json::from_slice(&response.bytes().await.unwrap()).unwrap_or(Value::Null);
    let codes = body["responseList"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|r| r["statusCode"].as_u64().unwrap())
                .collect()
        })
        .unwrap_or_default();
    (status, codes)
}

#[tokio::test]
async fn replication_batches_are_taken_only_from_configured_peers() {
    // Nothing listens on the peer's port; what matters is the address it names.
    let peer = format!("{}/eureka/", feign_test_support::closed_port_url());
    let server = dev().peer(peer).startup_sync(false).start().await.unwrap();
    let base = server.url();
    let stranger = Ipv4Addr::new(127, 0, 0, 2);
    let (status, _) = post_batch(base, stranger, vec![register_item(1)]).await;
    assert_eq!(status, 403, "127.0.0.2 is not a peer");
    assert_eq!(server.instance_count(), 0);
    let (status, codes) = post_batch(base, Ipv4Addr::LOCALHOST, vec![register_item(1)]).await;
    assert_eq!((status, codes), (200, vec![200]), "127.0.0.1 is the peer");
    assert_eq!(server.instance_count(), 1);
    server.shutdown().await;

    let alone = dev().start().await.unwrap();
    let (status, _) = post_batch(alone.url(), Ipv4Addr::LOCALHOST, vec![register_item(1)]).await;
    assert_eq!(status, 403, "a server without peers takes no batch");
    alone.shutdown().await;
}

#[tokio::test]
async fn replicated_registrations_count_against_the_registration_limit() {
    let peer = format!("{}/eureka/", feign_test_support::closed_port_url());
    let server = dev()
        .peer(peer)
        .startup_sync(false)
        .registration_rate_limit(Some((10, 1)))
        .start()
        .await
        .unwrap();
    let items = (0..500).map(register_item).collect();
    let (status, codes) = post_batch(server.url(), Ipv4Addr::LOCALHOST, items).await;
    assert_eq!(status, 200);
    let admitted = codes.iter().filter(|&&code| code == 200).count();
    assert!((10..=12).contains(&admitted), "{admitted} admitted");
    assert!(codes.iter().all(|&code| code == 200 || code == 503));
    assert_eq!(server.instance_count(), admitted);
    server.shutdown().await;
}

/// `x-netflix-discovery-replication: true` on a registration from an address that is not a
/// peer's is ignored: the registration is a client's, and the registration limit holds.
#[tokio::test]
async fn the_replication_header_from_a_stranger_skips_no_limit() {
    let server = dev()
        .registration_rate_limit(Some((20, 10)))
        .start()
        .await
        .unwrap();
    let base = server.url();
    let mut statuses = Vec::new();
    for n in 0..100 {
        let body = instance("A", &format!("a-{n}"), 8080, "UP", 1_732_881_099_990);
        let response = http()
            .post(format!("{base}apps/A"))
            .header("x-netflix-discovery-replication", "true")
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
    }
    let admitted = statuses.iter().filter(|&&s| s == 204).count();
    assert!((20..40).contains(&admitted), "{admitted} of 100 admitted");
    assert!(
        statuses.iter().all(|&s| s == 204 || s == 429),
        "{statuses:?}"
    );
    server.shutdown().await;
}

/// `GET apps/` from `from` with `password` (none: no credentials); the status.
async fn get_from(base: &str, from: Ipv4Addr, password: Option<&str>) -> u16 {
    let client = reqwest::Client::builder()
        .local_address(IpAddr::V4(from))
        .no_proxy()
        .build()
        .unwrap();
    let mut request = client.get(format!("{base}apps/"));
    if let Some(password) = password {
        request = request.basic_auth(USER, Some(password));
    }
    request.send().await.unwrap().status().as_u16()
}

/// 50 wrong passwords from one address: ten get 401, the rest 429, and so does the right one
/// from that address until it may try again (a second later); the right password from another
/// address works all along, and asking without credentials counts for nothing.
#[tokio::test]
async fn wrong_credentials_are_throttled_per_address() {
    let server = dev().credentials(USER, PASSWORD).start().await.unwrap();
    let base = server.url();
    let (guesser, other) = (Ipv4Addr::LOCALHOST, Ipv4Addr::new(127, 0, 0, 2));
    for _ in 0..20 {
        assert_eq!(get_from(base, guesser, None).await, 401, "no credentials");
    }
    let mut statuses = Vec::new();
    for n in 0..50 {
        statuses.push(get_from(base, guesser, Some(&format!("guess-{n}"))).await);
    }
    assert!(statuses[..10].iter().all(|&s| s == 401), "{statuses:?}");
    assert!(statuses[10..].iter().all(|&s| s == 429), "{statuses:?}");
    assert_eq!(get_from(base, guesser, Some(PASSWORD)).await, 429);
    assert_eq!(get_from(base, other, Some(PASSWORD)).await, 200);
    assert_eq!(get_from(base, other, Some("guess")).await, 401);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(get_from(base, guesser, Some(PASSWORD)).await, 200);
    server.shutdown().await;
}
