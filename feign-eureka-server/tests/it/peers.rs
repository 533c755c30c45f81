//! Peers known by who they are: a request counts as a peer's by the peer credentials or by a
//! client certificate valid for a peer URL's host, from whatever address it comes; by address,
//! with the peers' names resolved again when a peer moved; or from anyone when the registry takes
//! replication from any address. A registry reaches its https peers with the TLS settings it is
//! given (CA, client identity).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::client::eventually;
use crate::support::{dev, http, instance};

/// A peer URL on `host` at a free port: a peer known, never reached.
fn unreached_peer(host: &str) -> String {
    format!("http://{host}:{}/eureka/", feign_test_support::free_port())
}

/// A client sending from `from`, showing `identity` (certificate then key, PEM) when given and
/// trusting `ca` when given.
fn client_from(from: Ipv4Addr, identity: Option<&str>, ca: Option<&str>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .local_address(IpAddr::V4(from))
        .no_proxy();
    if let Some(identity) = identity {
        builder = builder.identity(reqwest::Identity::from_pem(identity.as_bytes()).unwrap());
    }
    if let Some(ca) = ca {
        builder = builder
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap());
    }
    builder.build().unwrap()
}

/// Posts a one-registration batch to `base` with `client`, with basic auth when given; the
/// status.
async fn post_batch(
    client: &reqwest::Client,
    base: &str,
    auth: Option<(&str, &str)>,
    id: &str,
) -> u16 {
    let body = instance("A", id, 8080, "UP", 1_732_881_099_990);
    let batch = json!({"replicationList": [{
        "appName": "A",
        "id": id,
        "lastDirtyTimestamp": 1_732_881_099_990u64,
        "status": "UP",
        "action": "Register",
        "instanceInfo": body["instance"],
    }]});
    let mut request = client
        .post(format!("{base}peerreplication/batch/"))
        .header("x-netflix-discovery-replication", "true")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(batch.to_string());
    if let Some((user, password)) = auth {
        request = request.basic_auth(user, Some(password));
    }
    request.send().await.unwrap().status().as_u16()
}

const STRANGER: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

#[tokio::test]
async fn a_peer_with_the_peer_credentials_replicates_from_any_address() {
    let server = dev()
        .credentials("client", "client-pw")
        .peer_credentials("peer", "peer-pw")
        .peer(unreached_peer("127.0.0.3"))
        .startup_sync(false)
        .start()
        .await
        .unwrap();
    let base = server.url();
    let from = client_from(STRANGER, None, None);
    assert_eq!(post_batch(&from, base, None, "a-1").await, 401);
    assert_eq!(
        post_batch(&from, base, Some(("client", "client-pw")), "a-1").await,
        403,
        "the clients' credentials make no peer"
    );
    assert_eq!(server.instance_count(), 0);
    assert_eq!(
        post_batch(&from, base, Some(("peer", "peer-pw")), "a-1").await,
        200,
        "the peer credentials do, from an address no peer resolves to"
    );
    assert_eq!(server.instance_count(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn guesses_at_the_peer_credentials_of_an_open_registry_are_throttled() {
    let server = dev()
        .peer_credentials("peer", "peer-pw")
        .startup_sync(false)
        .start()
        .await
        .unwrap();
    let from = client_from(STRANGER, None, None);
    let mut statuses = Vec::new();
    for n in 0..12 {
        let guess = format!("guess-{n}");
        statuses.push(post_batch(&from, server.url(), Some(("peer", &guess)), "a-1").await);
    }
    assert_eq!(&statuses[..10], &[403; 10], "{statuses:?}");
    assert_eq!(&statuses[10..], &[429; 2], "{statuses:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_peer_is_known_by_a_client_certificate_valid_for_its_url_host() {
    let pki = feign_test_support::tls::Pki::new();
    // The peer's URL names `localhost`, which resolves to 127.0.0.1 and ::1, never 127.0.0.2.
    let server = dev()
        .tls_pem(pki.server.cert.as_bytes(), pki.server.key.as_bytes())
        .tls_client_ca_pem(pki.ca.as_bytes())
        .peer(unreached_peer("localhost"))
        .startup_sync(false)
        .start()
        .await
        .unwrap();
    let base = server.url();
    // The server certificate is valid for localhost: the peer's own, shown as its identity.
    let peer_identity = format!("{}{}", pki.server.cert, pki.server.key);
    let peer = client_from(STRANGER, Some(&peer_identity), Some(&pki.ca));
    assert_eq!(post_batch(&peer, base, None, "a-1").await, 200);
    // A client certificate of the same CA that names no peer makes no peer.
    let client_identity = format!("{}{}", pki.client.cert, pki.client.key);
    let client = client_from(STRANGER, Some(&client_identity), Some(&pki.ca));
    assert_eq!(post_batch(&client, base, None, "a-2").await, 403);
    assert_eq!(server.instance_count(), 1);
    server.shutdown().await;
}

/// Resolves every name to 127.0.0.3, or to 127.0.0.2 once the peer has moved.
#[derive(Clone, Default)]
struct Moving {
    moved: Arc<AtomicBool>,
}

impl reqwest::dns::Resolve for Moving {
    fn resolve(&self, _name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let last = if self.moved.load(Ordering::SeqCst) {
            2
        } else {
            3
        };
        let address = SocketAddr::from(([127, 0, 0, last], 0));
        Box::pin(async move {
            let addresses: reqwest::dns::Addrs = Box::new(std::iter::once(address));
            Ok(addresses)
        })
    }
}

#[tokio::test]
async fn a_peer_that_moved_is_known_again_without_a_restart() {
    let resolver = Moving::default();
    let server = dev()
        .peer(unreached_peer("peer.invalid"))
        .peer_resolver(resolver.clone())
        .startup_sync(false)
        .start()
        .await
        .unwrap();
    let base = server.url();
    let from = client_from(STRANGER, None, None);
    assert_eq!(post_batch(&from, base, None, "a-1").await, 403, "not yet");
    resolver.moved.store(true, Ordering::SeqCst);
    // A name is resolved again at most once a second.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(post_batch(&from, base, None, "a-1").await, 200, "moved");
    server.shutdown().await;
}

#[tokio::test]
async fn replication_from_any_address_is_taken_when_asked_for() {
    let server = dev()
        .replication_from_any_address(true)
        .start()
        .await
        .unwrap();
    let from = client_from(STRANGER, None, None);
    assert_eq!(post_batch(&from, server.url(), None, "a-1").await, 200);
    assert_eq!(server.instance_count(), 1);
    server.shutdown().await;
}

/// A node replicates to an https peer that requires client certificates with the CA and
/// identity of its `peer_tls`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_reaches_its_mutual_tls_peer_with_its_peer_tls() {
    let pki = feign_test_support::tls::Pki::new();
    let first_port = feign_test_support::free_port();
    let second = dev()
        .tls_pem(pki.server.cert.as_bytes(), pki.server.key.as_bytes())
        .tls_client_ca_pem(pki.ca.as_bytes())
        .peer(format!("http://127.0.0.1:{first_port}/eureka/"))
        .startup_sync(false)
        .start()
        .await
        .unwrap();
    let first = dev()
        .bind(format!("127.0.0.1:{first_port}"))
        .peer(second.url())
        .peer_tls(
            feign_core::transport::Tls::new()
                .ca_pem(pki.ca.clone())
                .identity_pem(pki.server.cert.clone(), pki.server.key.clone()),
        )
        .replication_delay(Duration::from_millis(10))
        .start()
        .await
        .unwrap();
    let registered = http()
        .post(format!("{}apps/A", first.url()))
        .header("Content-Type", "application/json")
        .body(instance("A", "a-1", 8080, "UP", 1_732_881_099_990).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(registered.status(), 204);
    assert!(
        eventually(|| second.instance_count() == 1).await,
        "replicated over mutual TLS"
    );
    first.shutdown().await;
    second.shutdown().await;
}
