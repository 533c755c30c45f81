//! A cache in front of a supplier that pushes its changes adds no staleness: an instance added
//! behind it takes calls at once, and one removed stops getting them, with a 35 s TTL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use feign_lb::{CachingSupplier, LoadBalancer, ServiceInstance, SlowStart, StaticSupplier};
use feign_test_support::backend::{client, Backend, OrderServiceClient};

const SVC: &str = "order-service";

fn instance(backend: &Backend) -> ServiceInstance {
    ServiceInstance::new(SVC, "127.0.0.1", backend.addr.port())
}

/// Calls until `done` holds, failing after 5 s.
async fn call_until(orders: &OrderServiceClient, done: impl Fn() -> bool) {
    let started = Instant::now();
    let mut id = 0;
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the change did not pass through the cache"
        );
        id += 1;
        assert_eq!(orders.get_order(id).await.expect("call succeeds"), "ok");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_pass_through_a_cache_at_once() {
    let (first, second) = (Backend::start(), Backend::start());
    let source = StaticSupplier::new(SVC, [first.url()]);
    let cache = CachingSupplier::with_ttl(Arc::new(source.clone()), Duration::from_secs(35));
    let lb = LoadBalancer::builder()
        .supplier(cache)
        .slow_start(SlowStart::disabled())
        .build();
    let orders = client(&lb, Duration::from_secs(2));
    call_until(&orders, || first.hits() > 0).await;

    source.set(SVC, vec![instance(&first), instance(&second)]);
    call_until(&orders, || second.hits() > 0).await;

    source.set(SVC, vec![instance(&second)]);
    let second_before = second.hits();
    call_until(&orders, || second.hits() >= second_before + 20).await;
    let first_before = first.hits();
    for id in 0..20 {
        orders.get_order(id).await.expect("call succeeds");
    }
    assert_eq!(
        first.hits(),
        first_before,
        "a removed instance still got calls"
    );
}
