//! Metadata updates on an instance with large metadata (the instance limit raised for it):
//! limited per instance (429 with `Retry-After` beyond the limit), and the delta queue keeps
//! about one copy of the instance however many updates it records.

use std::time::Instant;

use serde_json::Value;

use crate::support::{dev, get_json, http, instances, large_instance, register};

/// A registration of `id` with 100 metadata entries of 4,000 bytes: about 400 KB.
fn large(id: &str) -> Value {
    large_instance("BIG", id, 100, "x")
}

async fn put_metadata(base: &str, id: &str, round: usize) -> reqwest::Response {
    http()
        .put(format!("{base}apps/BIG/{id}/metadata?round={round}"))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn metadata_updates_beyond_the_limit_get_429_with_retry_after() {
    let server = dev().max_instance_bytes(1 << 20).start().await.unwrap();
    let base = server.url().to_owned();
    assert_eq!(register(&base, "BIG", &large("big-1")).await, 204);
    assert_eq!(register(&base, "BIG", &large("big-2")).await, 204);
    let started = Instant::now();
    let mut admitted = 0;
    for round in 0..400 {
        let response = put_metadata(&base, "big-1", round).await;
        match response.status().as_u16() {
            200 => admitted += 1,
            429 => {
                let wait: u64 = response.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(wait >= 1, "Retry-After {wait}");
            }
            other => panic!("round {round}: {other}"),
        }
    }
    // The burst of 10, then one a second.
    let allowed = 10 + started.elapsed().as_secs() as usize + 1;
    assert!((10..=allowed).contains(&admitted), "{admitted} admitted");
    // The limit is the instance's own: another instance is still updated.
    assert_eq!(put_metadata(&base, "big-2", 0).await.status(), 200);
    server.shutdown().await;
}

#[tokio::test]
async fn the_delta_queue_keeps_about_one_copy_of_an_instance_updated_400_times() {
    let server = dev()
        .max_instance_bytes(1 << 20)
        .metadata_rate_limit(None)
        .start()
        .await
        .unwrap();
    let base = server.url().to_owned();
    assert_eq!(register(&base, "BIG", &large("big-1")).await, 204);
    let one_copy = server.delta_queue_bytes();
    assert!(one_copy > 400_000, "{one_copy} bytes for one instance");
    for round in 0..400 {
        assert_eq!(put_metadata(&base, "big-1", round).await.status(), 200);
    }
    let held = server.delta_queue_bytes();
    // Each update is a re-registration with a full copy; 400 of them would be 160 MB.
    assert!(held <= 3 * one_copy, "{held} bytes held after 400 updates");
    // The delta still shows the newest copy.
    let delta = get_json(&base, "apps/delta").await;
    let shown = &instances(&delta)[0];
    assert_eq!(shown["metadata"]["round"], "399", "{}", shown["metadata"]);
    server.shutdown().await;
}
