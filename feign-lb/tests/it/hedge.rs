//! Hedged requests through the balancer: with one instance slow (500 ms) and one fast, a GET
//! hedged after 50 ms answers from the fast one and the slow attempt is cancelled; every hedge
//! is paid for from the retry budget, so a budget of two retries pays for two hedges; POSTs, an
//! empty retry budget and a service with no other instance mean no hedge.

use std::time::{Duration, Instant};

use feign_core::HedgingConfig;
use feign_lb::{LoadBalancer, RetryBudget, RetryConfig, StaticSupplier};
use feign_test_support::backend::{Backend, Mode, OrderServiceClient};

const SVC: &str = "order-service";
const SLOW: Duration = Duration::from_millis(500);
const CALLS: usize = 4;

fn slow_backend() -> Backend {
    let backend = Backend::start_with_delay(SLOW);
    backend.set_mode(Mode::Slow);
    backend
}

fn balancer(urls: &[String], retry: RetryConfig) -> LoadBalancer {
    LoadBalancer::builder()
        .supplier(StaticSupplier::new(SVC, urls))
        .retry(retry)
        .build()
}

fn hedged_client(lb: &LoadBalancer) -> OrderServiceClient {
    OrderServiceClient::builder()
        .load_balancer(lb.clone())
        .hedging(HedgingConfig::after(Duration::from_millis(50)))
        .build()
        .expect("client builds")
}

/// Runs `CALLS` calls one after another (round robin starts half of them on each instance);
/// returns the slowest call's time.
async fn calls(client: &OrderServiceClient, post: bool) -> Duration {
    let mut slowest = Duration::ZERO;
    for id in 0..CALLS as u64 {
        let started = Instant::now();
        let answer = if post {
            client.create_order(id).await
        } else {
            client.get_order(id).await
        };
        assert_eq!(answer.expect("call succeeds"), "ok");
        slowest = slowest.max(started.elapsed());
    }
    slowest
}

/// Each call made one attempt, and the ones on the slow instance waited for it.
fn assert_not_hedged(slow: &Backend, fast: &Backend, slowest: Duration) {
    assert_eq!(slow.hits() + fast.hits(), CALLS);
    assert!(
        slow.hits() >= 1,
        "round robin started no call on the slow instance"
    );
    assert!(
        slowest >= SLOW - Duration::from_millis(20),
        "took {slowest:?}"
    );
}

#[tokio::test]
async fn a_slow_instance_is_hedged_to_a_fast_one_and_cancelled() {
    let (slow, fast) = (slow_backend(), Backend::start());
    let lb = balancer(&[slow.url(), fast.url()], RetryConfig::new());
    let slowest = calls(&hedged_client(&lb), false).await;
    assert!(slowest < Duration::from_millis(300), "took {slowest:?}");
    // Every call was answered by the fast instance; the ones started on the slow instance
    // were hedged there, and their slow attempts cancelled.
    assert_eq!(fast.hits(), CALLS);
    assert!(
        slow.hits() >= 1,
        "round robin started no call on the slow instance"
    );
    let counters = lb.counters(SVC).expect("service known");
    assert_eq!(counters.success, CALLS as u64, "{counters:?}");
    assert_eq!(counters.discard, slow.hits() as u64, "{counters:?}");
    assert_eq!(counters.active, 0, "{counters:?}");
}

#[tokio::test]
async fn a_hedge_never_goes_to_an_instance_already_tried() {
    let slow = slow_backend();
    let lb = balancer(&[slow.url()], RetryConfig::new());
    let client = hedged_client(&lb);
    let started = Instant::now();
    assert_eq!(client.get_order(1).await.expect("call succeeds"), "ok");
    assert!(started.elapsed() >= SLOW - Duration::from_millis(20));
    assert_eq!(slow.hits(), 1, "the only instance was asked twice");
    let counters = lb.counters(SVC).expect("service known");
    assert_eq!(counters.success, 1, "{counters:?}");
}

#[tokio::test]
async fn posts_are_not_hedged() {
    let (slow, fast) = (slow_backend(), Backend::start());
    let lb = balancer(&[slow.url(), fast.url()], RetryConfig::new());
    let slowest = calls(&hedged_client(&lb), true).await;
    assert_not_hedged(&slow, &fast, slowest);
    assert_eq!(lb.counters(SVC).expect("service known").discard, 0);
}

#[tokio::test]
async fn an_empty_retry_budget_means_no_hedge() {
    let (slow, fast) = (slow_backend(), Backend::start());
    let empty = RetryBudget::new().percent(0.0).min_per_second(0);
    let lb = balancer(&[slow.url(), fast.url()], RetryConfig::new().budget(empty));
    let slowest = calls(&hedged_client(&lb), false).await;
    assert_not_hedged(&slow, &fast, slowest);
    let counters = lb.counters(SVC).expect("service known");
    assert_eq!(counters.discard, 0, "{counters:?}");
    assert_eq!(
        counters.retry_budget_exhausted,
        slow.hits() as u64,
        "{counters:?}"
    );
}

/// A budget of two retries (nothing from the calls, one a second over a two-second window)
/// pays for exactly two hedges: of the calls that start on the slow instance, the first two are
/// hedged to the fast one, the next ones wait for the slow answer and count as refused by the
/// budget (all within the window).
#[tokio::test]
async fn each_hedge_spends_the_retry_budget() {
    let (slow, fast) = (slow_backend(), Backend::start());
    let two = RetryBudget::new()
        .percent(0.0)
        .min_per_second(1)
        .ttl(Duration::from_secs(2));
    let lb = balancer(&[slow.url(), fast.url()], RetryConfig::new().budget(two));
    let client = hedged_client(&lb);
    // Calls until four started on the slow instance (round robin alternates, a hedge's pick
    // moving it on too).
    let mut calls = 0;
    while slow.hits() < 4 {
        assert!(
            calls < 16,
            "round robin started only {} calls on the slow instance",
            slow.hits()
        );
        assert_eq!(client.get_order(calls).await.expect("call succeeds"), "ok");
        calls += 1;
    }
    // Every call answered by the fast instance that did not start there was a hedge.
    let started_fast = calls as usize - slow.hits();
    assert_eq!(
        fast.hits() - started_fast,
        2,
        "two hedges for a budget of two"
    );
    let counters = lb.counters(SVC).expect("service known");
    assert_eq!(counters.retry_budget_exhausted, 2, "{counters:?}");
    assert_eq!(
        counters.discard, 2,
        "the hedged slow attempts cancelled: {counters:?}"
    );
}
