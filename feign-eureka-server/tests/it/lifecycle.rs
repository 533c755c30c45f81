//! Leases over time: eviction (with Eureka's doubled expiry), self-preservation, and graceful
//! shutdown with requests in flight (case E4).

use std::time::Duration;

use crate::support::{call, dev, instance, register};
use feign_eureka_server::EurekaServer;
use reqwest::Method;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const LDT: u64 = 1_732_881_099_990;

fn short_lease(app: &str, id: &str, secs: u64) -> serde_json::Value {
    let mut body = instance(app, id, 1, "UP", LDT);
    body["instance"]["leaseInfo"] =
        serde_json::json!({"renewalIntervalInSecs": secs, "durationInSecs": secs});
    body
}

#[tokio::test]
async fn the_eviction_timer_removes_a_lease_that_stopped_renewing() {
    let server = dev()
        .netflix_lease_expiry(false)
        .eviction_interval(Duration::from_millis(100))
        .start()
        .await
        .unwrap();
    let base = server.url();
    assert_eq!(register(base, "A", &short_lease("A", "a-1", 1)).await, 204);
    assert_eq!(
        register(base, "A", &short_lease("A", "a-2", 3600)).await,
        204
    );
    let mut remaining = 2;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        remaining = server.instance_count();
        if remaining == 1 {
            break;
        }
    }
    assert_eq!(
        remaining, 1,
        "the 1 s lease is evicted, the 1 h lease stays"
    );
    assert_eq!(call(Method::GET, base, "apps/A/a-1").await.0, 404);
    assert_eq!(call(Method::GET, base, "apps/A/a-2").await.0, 200);
    // The heartbeat of an evicted instance asks it to register again.
    assert_eq!(call(Method::PUT, base, "apps/A/a-1").await.0, 404);
    server.shutdown().await;
}

/// On tokio's paused clock, which the registry's clock follows: the sleeps take no real time
/// and their lengths are exact to the millisecond (the HTTP calls run over loopback, always ready, so the clock
/// does not jump while they wait).
#[tokio::test(start_paused = true)]
async fn netflix_expiry_keeps_a_renewed_lease_for_two_durations() {
    let server = dev().start().await.unwrap();
    let base = server.url();
    assert_eq!(register(base, "A", &short_lease("A", "a-1", 1)).await, 204);
    assert_eq!(call(Method::PUT, base, "apps/A/a-1").await.0, 200);
    // Eureka expires a lease when now > last update + duration, and its renewal sets the last
    // update one duration ahead: alive for exactly two durations, gone a millisecond later.
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    assert_eq!(
        server.evict_now(),
        0,
        "two durations after the renewal it is still alive"
    );
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        server.evict_now(),
        1,
        "just over two durations after the renewal it is gone"
    );
    assert_eq!(server.instance_count(), 0);
    server.shutdown().await;
}

/// Eureka's rule for an instance that has proved its client alive (renewed one expected
/// renewal interval after registering, 1 s here): once renewals fall below the threshold, its
/// expired lease is kept.
#[tokio::test]
async fn self_preservation_stops_eviction_below_the_renewal_threshold() {
    let server = dev()
        .self_preservation(true)
        .expected_client_renewal_interval(Duration::from_secs(1))
        .start()
        .await
        .unwrap();
    let base = server.url();
    let before = server.self_preservation();
    // threshold = floor(1 * (60 / 1) * 0.85) = 51.
    assert_eq!((before.expected_clients, before.renews_threshold), (1, 51));
    assert_eq!(register(base, "A", &short_lease("A", "a-1", 1)).await, 204);
    assert_eq!(
        server.self_preservation().expected_clients,
        1,
        "not proved yet"
    );
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert_eq!(call(Method::PUT, base, "apps/A/a-1").await.0, 200);
    let state = server.self_preservation();
    // expected 1 + 1 proved client; threshold = floor(2 * (60 / 1) * 0.85) = 102.
    assert_eq!((state.expected_clients, state.renews_threshold), (2, 102));
    assert!(state.enabled && !state.lease_expiration_enabled);
    // Renewed, it lives two durations (Netflix's expiry): expired after 2 s.
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    assert_eq!(
        server.evict_now(),
        0,
        "self-preservation keeps the expired lease"
    );
    // Expired-but-not-evicted instances stay readable while expiration is disabled.
    assert_eq!(call(Method::GET, base, "apps/A/a-1").await.0, 200);
    assert_eq!(call(Method::DELETE, base, "apps/A/a-1").await.0, 200);
    assert_eq!(server.self_preservation().expected_clients, 1);
    server.shutdown().await;
}

/// Sends the head and the first part of a request, leaving one byte of the body unsent.
async fn start_request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
        .write_all(&body.as_bytes()[..body.len() - 1])
        .await
        .unwrap();
    stream
}

const ESTABLISHED: u8 = 0x01;
const LISTEN: u8 = 0x0A;

/// A server-side TCP socket as `/proc/net/tcp` shows it.
struct Socket {
    state: u8,
    /// Bytes received but not yet read by the server.
    unread: u64,
}

/// The IPv4 sockets whose local port is `port`, or `None` without `/proc/net/tcp`.
fn sockets(port: u16) -> Option<Vec<Socket>> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let sockets = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local_port = u16::from_str_radix(fields.get(1)?.rsplit(':').next()?, 16).ok()?;
            let state = u8::from_str_radix(fields.get(3)?, 16).ok()?;
            let unread = u64::from_str_radix(fields.get(4)?.rsplit(':').next()?, 16).ok()?;
            (local_port == port).then_some(Socket { state, unread })
        })
        .collect();
    Some(sockets)
}

/// Waits (at most 10 s) until the sockets on `port` satisfy `check`; without `/proc/net/tcp`,
/// waits 300 ms instead.
async fn until_sockets(port: u16, what: &str, check: impl Fn(&[Socket]) -> bool) {
    for _ in 0..1_000 {
        match sockets(port) {
            None => return tokio::time::sleep(Duration::from_millis(300)).await,
            Some(sockets) if check(&sockets) => return,
            Some(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
    panic!("timed out waiting until {what}");
}

#[tokio::test]
async fn shutdown_answers_every_request_in_flight_and_frees_the_port() {
    let server = dev().registration_rate_limit(None).start().await.unwrap();
    let addr = server.local_addr();
    assert_eq!(
        register(server.url(), "A", &instance("A", "renewer", 1, "UP", LDT)).await,
        204
    );
    let mut pending = Vec::new();
    for i in 0..50 {
        let stream = if i % 2 == 0 {
            let body = instance("A", &format!("a-{i}"), 1, "UP", LDT).to_string();
            let stream = start_request(addr, "POST", "/eureka/apps/A", &body).await;
            (stream, body)
        } else {
            let path = format!("/eureka/apps/A/renewer?status=UP&lastDirtyTimestamp={LDT}");
            (
                start_request(addr, "PUT", &path, "{}").await,
                "{}".to_owned(),
            )
        };
        pending.push(stream);
    }
    // Wait until the server has read every byte sent, so all 50 are in flight; then until
    // shutdown has closed the listener, so the requests are finished during the shutdown.
    until_sockets(addr.port(), "all 50 requests read", |sockets| {
        sockets.iter().filter(|s| s.state == ESTABLISHED).count() >= 50
            && sockets.iter().all(|s| s.unread == 0)
    })
    .await;
    let shutdown = tokio::spawn(server.shutdown());
    until_sockets(addr.port(), "the listener closed", |sockets| {
        sockets.iter().all(|s| s.state != LISTEN)
    })
    .await;
    let mut answers = Vec::new();
    for (mut stream, body) in pending {
        stream
            .write_all(&body.as_bytes()[body.len() - 1..])
            .await
            .unwrap();
        let mut response = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut response));
        read.await.expect("answered in time").expect("no reset");
        let text = String::from_utf8_lossy(&response).into_owned();
        answers.push(text.split(' ').nth(1).unwrap_or("none").to_owned());
    }
    tokio::time::timeout(Duration::from_secs(5), shutdown)
        .await
        .expect("shutdown completes")
        .unwrap();
    // Every request was read, head and all but its last byte, before the shutdown began: the
    // registry took each on when its head arrived, so each is answered as it would have been
    // without the shutdown, none with the 503 of a request that arrives during it.
    let expected: Vec<&str> = (0..50)
        .map(|i| if i % 2 == 0 { "204" } else { "200" })
        .collect();
    assert_eq!(answers, expected);
    // The port is free again at once.
    let again = dev()
        .bind(addr.to_string())
        .start()
        .await
        .expect("port reusable");
    again.shutdown().await;
}

/// A burst of 50 one-second leases that never renew, on a registry with self-preservation on
/// (as in production): they are not expected to renew, expire, and are evicted, where they
/// used to engage self-preservation and stop eviction for the whole registry.
#[tokio::test]
async fn registrations_that_never_renew_do_not_hold_eviction() {
    let server = EurekaServer::builder()
        .bind("127.0.0.1:0")
        .read_only_cache(false)
        .start()
        .await
        .unwrap();
    let base = server.url();
    for i in 0..50 {
        let mut body = instance("A", &format!("a-{i}"), 8080, "UP", LDT);
        body["instance"]["leaseInfo"] =
            serde_json::json!({"renewalIntervalInSecs": 1, "durationInSecs": 1});
        assert_eq!(register(base, "A", &body).await, 204);
    }
    assert_eq!(server.self_preservation().expected_clients, 1);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!server.self_preservation().lease_expiration_enabled);
    assert_eq!(server.evict_now(), 50);
    assert_eq!(server.instance_count(), 0);
    server.shutdown().await;
}
