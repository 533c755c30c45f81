//! The registry's size: an instance larger than an instance may be, a registry that would grow
//! past what a client reads, more instances than it holds, and more bytes from one address
//! than it takes each second are refused, each naming its limit; the delta stays within the
//! registry's limit however many instances come and go.

use std::time::Duration;

use feign_eureka::EurekaClient;
use serde_json::Value;

use crate::support::{
    call, dev, http, instance, large_instance, post_raw, register, start, unlimited,
};

const LDT: u64 = 1_732_881_099_990;

/// A registration of `id` (application `BIG`) with `entries` metadata values of 4,000 bytes.
fn large(id: &str, entries: usize) -> Value {
    large_instance("BIG", id, entries, "x")
}

#[tokio::test]
async fn an_instance_larger_than_an_instance_may_be_gets_413_naming_the_limit() {
    let server = start().await;
    let base = server.url();
    // 128 values of 4,000 bytes, each within the metadata limits: 512 KB.
    let body = large("big-1", 128).to_string().into_bytes();
    let (status, reason) = post_raw(base, "apps/BIG", body).await;
    assert_eq!(status, 413, "{reason}");
    assert!(reason.contains("65536 bytes"), "{reason}");
    assert!(reason.contains("max_instance_bytes"), "{reason}");
    assert_eq!(server.instance_count(), 0);

    // An instance within the limit cannot grow past it by metadata updates either.
    assert_eq!(register(base, "BIG", &large("big-1", 10)).await, 204);
    let value = "y".repeat(4000);
    let path = (0..10).fold("apps/BIG/big-1/metadata?".to_owned(), |path, i| {
        format!("{path}m{i}={value}&")
    });
    let (status, reason) = call(reqwest::Method::PUT, base, &path).await;
    assert_eq!(status, 413, "{reason}");
    assert!(reason.contains("max_instance_bytes"), "{reason}");
    server.shutdown().await;
}

/// With the default limits, a registry filled with large instances stops short of what a
/// feign-eureka client reads (32 MiB by default), says so at registration, and a default
/// client reads all of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_registry_refuses_more_and_every_client_reads_it() {
    let server = unlimited().start().await.unwrap();
    let base = server.url().to_owned();
    let mut stored = 0;
    let mut refusal = None;
    for i in 0..700 {
        let body = large(&format!("big-{i}"), 15).to_string().into_bytes();
        match post_raw(&base, "apps/BIG", body).await {
            (204, _) => stored += 1,
            (413, reason) => {
                refusal = Some(reason);
                break;
            }
            (status, reason) => panic!("{status}: {reason}"),
        }
    }
    let reason = refusal.expect("the registry is full before 700 instances of 60 KB");
    assert!(reason.contains("max_registry_bytes"), "{reason}");
    assert!(reason.contains(&(30 * 1024 * 1024).to_string()), "{reason}");
    assert!(stored > 400, "{stored} stored");

    let whole = http()
        .get(format!("{base}apps/"))
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(whole.len() <= 30 * 1024 * 1024, "{} bytes", whole.len());
    let client = EurekaClient::builder()
        .service_urls([base.as_str()])
        .start()
        .await
        .expect("a default client reads the full registry");
    assert_eq!(client.applications().instance_count(), stored);
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn the_registry_holds_at_most_its_instance_count() {
    let server = dev().max_instances(10).start().await.unwrap();
    let base = server.url();
    for i in 0..10 {
        let body = instance("A", &format!("a-{i}"), 8080, "UP", LDT);
        assert_eq!(register(base, "A", &body).await, 204);
    }
    let body = instance("A", "a-10", 8080, "UP", LDT);
    let (status, reason) = post_raw(base, "apps/A", body.to_string().into_bytes()).await;
    assert_eq!(status, 413, "{reason}");
    assert!(reason.contains("limit of 10 instances"), "{reason}");
    // An instance it holds registers again; one that leaves makes room.
    assert_eq!(
        register(base, "A", &instance("A", "a-3", 8081, "UP", LDT)).await,
        204
    );
    assert_eq!(
        call(reqwest::Method::DELETE, base, "apps/A/a-0").await.0,
        200
    );
    assert_eq!(register(base, "A", &body).await, 204);
    server.shutdown().await;
}

/// Registrations of 60 KB from one address: the bytes run out (8 MiB at once by default) long
/// before the count of registrations does.
#[tokio::test]
async fn registrations_are_limited_in_bytes_per_address() {
    let server = dev().registration_rate_limit(None).start().await.unwrap();
    let base = server.url();
    let started = std::time::Instant::now();
    let mut refused = None;
    let mut sent = 0;
    for i in 0..600 {
        let body = large(&format!("big-{i:03}"), 15).to_string();
        let response = http()
            .post(format!("{base}apps/BIG"))
            .header("Content-Type", "application/json")
            .body(body.clone())
            .send()
            .await
            .unwrap();
        if response.status() == 429 {
            let wait = response.headers()["retry-after"]
                .to_str()
                .unwrap()
                .to_owned();
            refused = Some((wait, response.text().await.unwrap(), body.len()));
            break;
        }
        assert_eq!(response.status(), 204);
        sent += body.len();
    }
    let (wait, reason, size) = refused.expect("bytes are limited");
    // 8 MiB at once, then 1 MiB a second.
    let allowed = 8 * 1024 * 1024 + (started.elapsed().as_secs() as usize + 1) * 1024 * 1024;
    assert!(sent + size > 8 * 1024 * 1024, "refused after {sent} bytes");
    assert!(sent <= allowed, "{sent} bytes taken, {allowed} allowed");
    assert!(wait.parse::<u64>().unwrap() >= 1);
    assert!(reason.contains("bytes"), "{reason}");
    server.shutdown().await;
}

/// Instances that register and leave, 60 KB each, five times the registry's limit of 1 MiB:
/// the delta shows the latest ones within the limit.
#[tokio::test]
async fn the_delta_stays_within_the_registry_limit_under_churn() {
    let server = unlimited()
        .max_registry_bytes(1 << 20)
        .start()
        .await
        .unwrap();
    let base = server.url();
    for i in 0..90 {
        let id = format!("big-{i}");
        assert_eq!(register(base, "BIG", &large(&id, 15)).await, 204);
        let cancelled = call(reqwest::Method::DELETE, base, &format!("apps/BIG/{id}")).await;
        assert_eq!(cancelled.0, 200);
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    let (status, delta) = call(reqwest::Method::GET, base, "apps/delta").await;
    assert_eq!(status, 200);
    assert!(delta.len() <= 1 << 20, "{} bytes of delta", delta.len());
    assert!(delta.contains("big-89"), "the latest change is shown");
    server.shutdown().await;
}
