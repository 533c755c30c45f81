//! An instance dies mid-traffic three ways (connection refused, 503, hang past the per-try
//! timeout): GETs with default settings see no error. POSTs are retried only when nothing was
//! sent (case C7). Under total failure the retry budget bounds attempts (case D2).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use feign_lb::{LoadBalancer, RetryConfig, SlowStart, StaticSupplier};
use feign_test_support::backend::{client, Backend, Mode, OrderServiceClient};
use feign_test_support::closed_port_url;

const SVC: &str = "order-service";

fn balancer(urls: &[String]) -> LoadBalancer {
    LoadBalancer::builder()
        .supplier(StaticSupplier::new(SVC, urls))
        .build()
}

/// Runs `calls` GETs, `concurrency` at a time; after `trigger_at` calls have completed, runs
/// `fault` once. Returns the caller-visible errors.
async fn traffic(
    client: &OrderServiceClient,
    calls: usize,
    concurrency: usize,
    trigger_at: usize,
    fault: impl FnOnce(),
) -> Vec<String> {
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (client, next, done, errors) =
            (client.clone(), next.clone(), done.clone(), errors.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let id = next.fetch_add(1, Ordering::SeqCst);
                if id >= calls {
                    return;
                }
                if let Err(e) = client.get_order(id as u64).await {
                    errors.lock().unwrap().push(e.to_string());
                }
                done.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    let mut fault = Some(fault);
    while done.load(Ordering::SeqCst) < trigger_at {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    (fault.take().unwrap())();
    for w in workers {
        w.await.unwrap();
    }
    let errors = errors.lock().unwrap().clone();
    errors
}

fn assert_no_errors(errors: &[String]) {
    assert!(
        errors.is_empty(),
        "{} errors, first: {:?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_sees_no_error_when_an_instance_is_killed() {
    let mut backends: Vec<Backend> = (0..4).map(|_| Backend::start()).collect();
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let lb = balancer(&urls);
    let orders = client(&lb, Duration::from_secs(2));
    let victim = std::sync::Mutex::new(Some(backends.remove(0)));
    let errors = traffic(&orders, 600, 8, 150, || {
        if let Some(mut backend) = victim.lock().unwrap().take() {
            backend.kill();
        }
    })
    .await;
    assert_no_errors(&errors);
    let states = lb.instance_states(SVC);
    assert!(
        states.iter().any(|s| s.ejected),
        "the dead instance is ejected"
    );
    assert!(backends.iter().all(|b| b.hits() > 100));
}

/// One of two instances killed, with slow start on and off: the dead one is ejected at its
/// first refused connection and stays out (one of two ejected is not a panic), so the failed
/// attempts are those in flight at the kill and the first refusal, and no caller sees an
/// error. With half counted as a panic, picks kept going to the dead instance (a tenth of its
/// share while slow start ramped it, all of it without) until the retries drained the budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_of_two_instances_killed_costs_no_caller_an_error_with_slow_start_on_or_off() {
    for slow_start in [SlowStart::new(), SlowStart::disabled()] {
        let stable = Backend::start();
        let dying = Backend::start();
        let lb = LoadBalancer::builder()
            .supplier(StaticSupplier::new(SVC, [stable.url(), dying.url()]))
            .slow_start(slow_start.clone())
            .build();
        let orders = client(&lb, Duration::from_secs(2));
        let concurrency = 4;
        let victim = std::sync::Mutex::new(Some(dying));
        let errors = traffic(&orders, 1_000, concurrency, 200, || {
            if let Some(mut backend) = victim.lock().unwrap().take() {
                backend.kill();
            }
        })
        .await;
        assert_no_errors(&errors);
        let counters = lb.counters(SVC).unwrap();
        assert_eq!(counters.panic, 0, "{slow_start:?}: {counters:?}");
        assert!(
            counters.failed <= concurrency as u64 + 1,
            "{slow_start:?}: the dead instance kept being picked: {counters:?}"
        );
        assert!(stable.hits() >= 800, "{slow_start:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_sees_no_error_when_an_instance_turns_to_503() {
    let backends: Vec<Backend> = (0..4).map(|_| Backend::start()).collect();
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let lb = balancer(&urls);
    let orders = client(&lb, Duration::from_secs(2));
    let errors = traffic(&orders, 600, 8, 150, || {
        backends[1].set_mode(Mode::Unavailable);
    })
    .await;
    assert_no_errors(&errors);
    let counters = lb.counters(SVC).unwrap();
    assert!(counters.retries >= 5, "{counters:?}");
    assert_eq!(
        counters.ejections, 1,
        "five 503s in a row eject it: {counters:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_sees_no_error_when_an_instance_hangs_past_the_per_try_timeout() {
    let backends: Vec<Backend> = (0..4).map(|_| Backend::start()).collect();
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let lb = balancer(&urls);
    let orders = client(&lb, Duration::from_millis(300));
    let started = Instant::now();
    let errors = traffic(&orders, 400, 8, 100, || backends[2].set_mode(Mode::Hang)).await;
    assert_no_errors(&errors);
    assert!(
        lb.instance_states(SVC).iter().any(|s| s.ejected),
        "five timeouts eject it"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// Case C7: instances that refuse connections, hang, or answer 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c7_retries_go_elsewhere_and_post_only_when_nothing_was_sent() {
    let good = Backend::start();
    let unavailable = Backend::start();
    unavailable.set_mode(Mode::Unavailable);
    let hanging = Backend::start();
    hanging.set_mode(Mode::Hang);

    // GET: every retry goes to an instance not tried before in that call.
    let retry = RetryConfig::new().max_retries_on_next_instance(3);
    let lb3 = LoadBalancer::builder()
        .supplier(StaticSupplier::new(
            SVC,
            [
                closed_port_url(),
                unavailable.url(),
                hanging.url(),
                good.url(),
            ],
        ))
        .retry(retry)
        .ejection(feign_lb::Ejection::disabled())
        .build();
    let orders3 = client(&lb3, Duration::from_millis(300));
    for id in 0..8u64 {
        assert_eq!(
            orders3.get_order(1000 + id).await.unwrap(),
            "ok",
            "3 retries reach the good instance"
        );
    }
    for backend in [&unavailable, &hanging] {
        let log = backend.log();
        let mut paths: Vec<&String> = log.iter().map(|(_, p)| p).collect();
        let before = paths.len();
        paths.sort();
        paths.dedup();
        assert_eq!(
            paths.len(),
            before,
            "no call tried the same instance twice: {log:?}"
        );
    }

    // POST to an instance refusing connections: retried elsewhere (nothing was sent).
    let refusing = balancer(&[closed_port_url(), good.url()]);
    let post = client(&refusing, Duration::from_millis(300));
    for id in 0..6u64 {
        assert_eq!(post.create_order(id).await.unwrap(), "ok");
    }

    // POST answered 503, or hanging: not retried, the caller gets the error.
    for (bad, per_try) in [
        (&unavailable, Duration::from_secs(2)),
        (&hanging, Duration::from_millis(200)),
    ] {
        let lb = LoadBalancer::builder()
            .supplier(StaticSupplier::new(SVC, [bad.url(), good.url()]))
            .ejection(feign_lb::Ejection::disabled())
            .build();
        let post = client(&lb, per_try);
        let before_bad = bad.hits();
        let before_good = good.hits();
        let mut failures = 0;
        for id in 0..6u64 {
            if post.create_order(id).await.is_err() {
                failures += 1;
            }
        }
        assert_eq!(
            failures, 3,
            "round robin sends half the POSTs to the bad instance"
        );
        assert_eq!(bad.hits() - before_bad, 3, "one attempt each");
        assert_eq!(
            good.hits() - before_good,
            3,
            "no POST was retried on the good instance"
        );
    }
}

/// `n` backends answering 503, and their URLs.
fn failing_backends(n: usize) -> (Vec<Backend>, Vec<String>) {
    let backends: Vec<Backend> = (0..n).map(|_| Backend::start()).collect();
    for b in &backends {
        b.set_mode(Mode::Unavailable);
    }
    let urls = backends.iter().map(Backend::url).collect();
    (backends, urls)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_is_not_retried_on_503() {
    let (backends, urls) = failing_backends(3);
    let lb = balancer(&urls);
    let orders = client(&lb, Duration::from_secs(2));
    for id in 0..30u64 {
        let err = orders.create_order(id).await.unwrap_err();
        assert_eq!(err.status().map(|s| s.as_u16()), Some(503));
    }
    let attempts: usize = backends.iter().map(Backend::hits).sum();
    assert_eq!(attempts, 30);
}

/// Case D2, on loopback and bounded: every instance fails, each call may retry 3 times, and
/// the budget (20 % + 10/s) holds attempts to 1.2 × calls plus the per-second allowance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d2_retry_budget_bounds_attempts_under_total_failure() {
    let (backends, urls) = failing_backends(4);
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::new(SVC, &urls))
        .retry(RetryConfig::new().max_retries_on_next_instance(3))
        .build();
    let orders = client(&lb, Duration::from_secs(2));
    let started = Instant::now();
    let calls = 1_000;
    let errors = traffic(&orders, calls, 20, 0, || {}).await;
    let elapsed = started.elapsed();
    assert_eq!(errors.len(), calls);
    let attempts: usize = backends.iter().map(Backend::hits).sum();
    // 10/s over the 10 s window is a standing allowance of 100 retries.
    let bound = (1.2 * calls as f64) as usize + 100 + 10 * elapsed.as_secs() as usize;
    assert!(
        attempts <= bound,
        "{attempts} attempts for {calls} calls in {elapsed:?} (bound {bound})"
    );
    assert!(attempts > calls, "some retries were allowed");
    let counters = lb.counters(SVC).unwrap();
    assert!(counters.retry_budget_exhausted > 0, "{counters:?}");
    let refused = errors
        .iter()
        .filter(|e| e.contains("retry budget exhausted"))
        .count();
    assert_eq!(
        refused as u64, counters.retry_budget_exhausted,
        "every call the budget stopped says so in its error"
    );
    assert!(elapsed < Duration::from_secs(60));
}
