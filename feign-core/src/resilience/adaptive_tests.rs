//! The adaptive limit's unit tests, beside `adaptive.rs` rather than in it: the loom models
//! compile that file with loom's atomics, which only run inside a model.

use std::time::Duration;

use super::adaptive::{AdaptiveLimit, Ticket};
use super::adaptive_config::AdaptiveLimitConfig;

fn config() -> AdaptiveLimitConfig {
    AdaptiveLimitConfig::default()
        .initial_limit(10)
        .min_limit(2)
        .max_limit(40)
        .min_samples(5)
        .sample_window(Duration::from_millis(100))
        .min_rtt_refresh(Duration::from_secs(3600))
}

/// Runs `windows` windows of `calls` concurrent calls each taking `latency(calls)`, as
/// many as the limit admits; returns the limit after each window.
async fn run(
    limit: &AdaptiveLimit,
    windows: usize,
    calls: u32,
    latency: impl Fn(u32) -> Duration,
) -> Vec<u32> {
    let mut limits = Vec::new();
    for _ in 0..windows {
        let admitted: Vec<Ticket<'_>> = (0..calls).filter_map(|_| limit.enter().ok()).collect();
        let took = latency(u32::try_from(admitted.len()).unwrap());
        tokio::time::sleep(took).await;
        for ticket in admitted {
            ticket.finish();
        }
        // Make sure the next window's calls close this one.
        tokio::time::sleep(Duration::from_millis(100).saturating_sub(took)).await;
        limits.push(limit.current());
    }
    limits
}

#[tokio::test(start_paused = true)]
async fn grows_while_latency_stays_at_its_minimum_up_to_max() {
    let limit = AdaptiveLimit::new("grow", config());
    let limits = run(&limit, 40, 100, |_| Duration::from_millis(20)).await;
    assert!(limits.windows(2).all(|w| w[1] >= w[0]), "{limits:?}");
    assert!(limits[5] > 10, "{limits:?}");
    assert_eq!(*limits.last().unwrap(), 40, "capped at max: {limits:?}");
}

#[tokio::test(start_paused = true)]
async fn shrinks_when_latency_rises_but_never_below_min() {
    let limit = AdaptiveLimit::new("shrink", config().min_limit(6));
    run(&limit, 5, 100, |_| Duration::from_millis(20)).await;
    let before = limit.current();
    let limits = run(&limit, 30, 100, |_| Duration::from_millis(90)).await;
    assert!(limits[3] < before, "{before} then {limits:?}");
    assert_eq!(*limits.last().unwrap(), 6, "floored at min: {limits:?}");
    assert!(limits.iter().all(|&l| l >= 6), "{limits:?}");
}

#[tokio::test(start_paused = true)]
async fn settles_where_latency_grows_with_load() {
    // latency = 10 ms + 2 ms per call in flight: at 20 calls, 50 ms.
    let limit = AdaptiveLimit::new("settle", config().max_limit(200));
    let limits = run(&limit, 60, 200, |n| {
        Duration::from_millis(10 + 2 * u64::from(n))
    })
    .await;
    let last = &limits[40..];
    // Within the tolerance of the unloaded 12 ms, and some headroom: a limit of about 10.
    assert!(last.iter().all(|&l| (3..=16).contains(&l)), "{limits:?}");
}

#[tokio::test(start_paused = true)]
async fn does_not_grow_when_the_client_uses_little_of_it() {
    let limit = AdaptiveLimit::new("idle", config());
    let limits = run(&limit, 20, 3, |_| Duration::from_millis(20)).await;
    // After the first window, at min_limit, measured the unloaded latency.
    // (a window closes on its fifth call, so it lags the loop by one round).
    assert!(limits[2..].iter().all(|&l| l == 10), "{limits:?}");
}

#[tokio::test(start_paused = true)]
async fn sheds_over_the_limit_and_cancelled_calls_free_their_place() {
    let limit = AdaptiveLimit::new("shed", config().initial_limit(2));
    let first = limit.enter().unwrap();
    let _second = limit.enter().unwrap();
    let error = limit.enter().err().expect("over the limit");
    assert!(error.is_bulkhead_full(), "{error}");
    assert!(
        error
            .to_string()
            .contains("adaptive concurrency limit of 2 calls in flight"),
        "{error}"
    );
    drop(first);
    assert!(limit.enter().is_ok());
}

#[tokio::test(start_paused = true)]
async fn measures_the_unloaded_latency_again() {
    let limit = AdaptiveLimit::new("refresh", config().min_rtt_refresh(Duration::from_secs(2)));
    // Fast at first, then slower for good: without a refresh the limit would stay at min.
    run(&limit, 10, 100, |_| Duration::from_millis(10)).await;
    let limits = run(&limit, 60, 100, |_| Duration::from_millis(40)).await;
    assert!(limits.contains(&2), "shrank first: {limits:?}");
    assert_eq!(
        limits[20..].iter().max(),
        Some(&40),
        "recovered: {limits:?}"
    );
}

/// Calls that take no measurable time (an in-memory service under paused time) make a window's
/// latency zero: the limit stays within its bounds rather than turn into 0/0.
#[tokio::test(start_paused = true)]
async fn calls_that_take_no_time_keep_the_limit_within_its_bounds() {
    let limit = AdaptiveLimit::new("instant", config());
    for _ in 0..5 {
        let admitted: Vec<Ticket<'_>> = (0..10).filter_map(|_| limit.enter().ok()).collect();
        for ticket in admitted {
            ticket.finish();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let now = limit.current();
    assert!((2..=40).contains(&now), "limit {now}");
    assert!(limit.enter().is_ok(), "a call is admitted");
}
