//! The adaptive concurrency limit through `#[feign_client]` against a loopback service whose
//! latency grows with its load: the excess is shed at once and the admitted calls stay fast.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use feign_core::resilience::AdaptiveLimitConfig;
use feign_core::resilience::ADAPTIVE_CONCURRENCY_LIMIT;
use feign_core::Retryer;
use feign_test_support::{calls_service, loaded_service, Calls as _, CallsClient, MetricsCapture};

/// 48 callers calling in a loop for `run`; the median latency of the answered calls, how many
/// were shed, and the slowest shedding.
async fn offered_load(client: &CallsClient, run: Duration) -> (Duration, usize, Duration) {
    let end = Instant::now() + run;
    let callers: Vec<_> = (0..48)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                let (mut answered, mut shed, mut slowest_shed) = (Vec::new(), 0, Duration::ZERO);
                while Instant::now() < end {
                    let start = Instant::now();
                    match client.call("ok").await {
                        Ok(_) => answered.push(start.elapsed()),
                        Err(error) => {
                            assert!(error.is_bulkhead_full(), "{error}");
                            shed += 1;
                            slowest_shed = slowest_shed.max(start.elapsed());
                            // A shed caller backs off a little, as a real one would.
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                    }
                }
                (answered, shed, slowest_shed)
            })
        })
        .collect();
    let (mut answered, mut shed, mut slowest_shed) = (Vec::new(), 0, Duration::ZERO);
    for caller in callers {
        let (a, s, slowest) = caller.await.unwrap();
        answered.extend(a);
        shed += s;
        slowest_shed = slowest_shed.max(slowest);
    }
    answered.sort();
    assert!(!answered.is_empty());
    (answered[answered.len() / 2], shed, slowest_shed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sheds_the_excess_and_keeps_the_admitted_calls_near_unloaded_latency() {
    // 10 ms, plus 4 ms per request in flight: 14 ms alone, over 200 ms with 48 at once.
    let (url, service) = loaded_service(Duration::from_millis(10), Duration::from_millis(4)).await;
    let unlimited = CallsClient::builder()
        .url(&url)
        .retryer(Retryer::never())
        .build()
        .unwrap();
    let (median, shed, _) = offered_load(&unlimited, Duration::from_secs(2)).await;
    assert_eq!(shed, 0);
    assert!(median > Duration::from_millis(150), "{median:?}");
    assert!(service.max_in_flight.load(Ordering::SeqCst) >= 40);

    let limited = CallsClient::builder()
        .url(&url)
        .retryer(Retryer::never())
        .adaptive_concurrency(AdaptiveLimitConfig::default())
        .build()
        .unwrap();
    let (median, shed, slowest_shed) = offered_load(&limited, Duration::from_secs(3)).await;
    assert!(shed > 100, "{shed}");
    assert!(
        slowest_shed < Duration::from_millis(50),
        "shed at once: {slowest_shed:?}"
    );
    // Tolerance 1.25 plus the limit's headroom: within about twice the unloaded 14 ms.
    assert!(median < Duration::from_millis(60), "{median:?}");
}

#[tokio::test]
async fn a_limit_outside_its_bounds_is_a_build_error() {
    let error = CallsClient::builder()
        .url("http://127.0.0.1:9")
        .adaptive_concurrency(AdaptiveLimitConfig::default().min_limit(10).max_limit(5))
        .build()
        .unwrap_err();
    assert!(error.is_builder());
    assert!(error.to_string().contains("`max_limit`"), "{error}");
}

#[tokio::test]
async fn the_limit_is_a_gauge_starting_at_min_then_initial() {
    let metrics = MetricsCapture::install();
    let (url, _service) = calls_service().await;
    let client = CallsClient::builder()
        .url(url)
        .adaptive_concurrency(
            AdaptiveLimitConfig::default()
                .min_limit(2)
                .initial_limit(7)
                .sample_window(Duration::from_millis(1))
                .min_samples(5),
        )
        .build()
        .unwrap();
    let limit = || {
        metrics
            .snapshot()
            .get(ADAPTIVE_CONCURRENCY_LIMIT, &[("name", "calls")])
    };
    // The first window measures the unloaded latency at `min_limit`. (A snapshot takes the
    // gauge's value: read it once per change.)
    assert_eq!(limit(), Some(2.0));
    for _ in 0..4 {
        client.call("ok").await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(2)).await;
    client.call("ok").await.unwrap();
    assert_eq!(limit(), Some(7.0));
}
