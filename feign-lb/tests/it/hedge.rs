//! Hedged requests through the balancer: with one instance slow (500 ms) and one fast, a GET
//! hedged after 50 ms answers from the fast one and the slow attempt is cancelled; POSTs, an
//! empty hedge budget and a service with no other instance mean no hedge; the retry budget is
//! not the hedges'; and a fleet slow all at once gets few hedges, then none.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use feign_core::HedgingConfig;
use feign_lb::{HedgeBudget, LoadBalancer, RetryBudget, RetryConfig, StaticSupplier};
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
async fn an_empty_hedge_budget_means_no_hedge() {
    let (slow, fast) = (slow_backend(), Backend::start());
    let empty = HedgeBudget::new().percent(0.0).min_per_second(0);
    let lb = balancer(
        &[slow.url(), fast.url()],
        RetryConfig::new().hedge_budget(empty),
    );
    let slowest = calls(&hedged_client(&lb), false).await;
    assert_not_hedged(&slow, &fast, slowest);
    let counters = lb.counters(SVC).expect("service known");
    assert_eq!(counters.discard, 0, "{counters:?}");
    assert_eq!(counters.hedges, 0, "{counters:?}");
    assert_eq!(counters.hedges_refused, slow.hits() as u64, "{counters:?}");
    assert_eq!(counters.retry_budget_exhausted, 0, "{counters:?}");
}

/// Hedges have a budget of their own: an empty retry budget leaves them alone.
#[tokio::test]
async fn hedges_do_not_draw_on_the_retry_budget() {
    let (slow, fast) = (slow_backend(), Backend::start());
    let empty = RetryBudget::new().percent(0.0).min_per_second(0);
    let lb = balancer(&[slow.url(), fast.url()], RetryConfig::new().budget(empty));
    let slowest = calls(&hedged_client(&lb), false).await;
    assert!(slowest < Duration::from_millis(300), "took {slowest:?}");
    let counters = lb.counters(SVC).expect("service known");
    assert_eq!(counters.hedges, slow.hits() as u64, "{counters:?}");
    assert_eq!(counters.retry_budget_exhausted, 0, "{counters:?}");
}

/// Every instance stalls at once (an overload, not an outlier): each call asks for a hedge,
/// and the hedges stop at the budget's few per second and, once ten calls show that most are
/// slow, altogether. Paid from the retry budget, all 40 calls were hedged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_fleet_caps_the_hedges() {
    let backends: Vec<Backend> = (0..3).map(|_| slow_backend()).collect();
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let lb = balancer(&urls, RetryConfig::new());
    let client = OrderServiceClient::builder()
        .load_balancer(lb.clone())
        .hedging(HedgingConfig::after(Duration::from_millis(20)))
        .build()
        .expect("client builds");
    let calls = 40u64;
    let next = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let (client, next) = (client.clone(), next.clone());
            tokio::spawn(async move {
                while next.fetch_add(1, Ordering::SeqCst) < calls {
                    assert_eq!(client.get_order(1).await.expect("call succeeds"), "ok");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.expect("worker ends");
    }
    let counters = lb.counters(SVC).expect("service known");
    assert!(counters.hedges <= 6, "{counters:?}");
    assert_eq!(
        counters.hedges + counters.hedges_refused,
        calls,
        "every call asked once: {counters:?}"
    );
    let attempts: usize = backends.iter().map(Backend::hits).sum();
    assert_eq!(attempts as u64, calls + counters.hedges);
}
