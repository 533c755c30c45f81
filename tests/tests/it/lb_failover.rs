//! A client declared with only a service name, resolved through `feign_lb::LoadBalancer` to
//! real axum servers on 127.0.0.1: an instance refusing connections, or one answering 503,
//! costs GET callers nothing, while a POST answered 503 is not retried.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use feign_core::resolve::Resolver;
use feign_core::{feign_client, Error};
use feign_lb::{LoadBalancer, Policy, StaticSupplier};
use feign_test_support::closed_port_url;

#[feign_client("order-service")]
trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<String, Error>;

    #[post("/orders")]
    async fn create(&self, #[body] item: &str) -> Result<String, Error>;
}

/// A server answering every request with `status`, counting them.
async fn server(status: StatusCode) -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let handler = move || {
        let counter = counter.clone();
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            (status, "ok")
        }
    };
    let app = Router::new()
        .route("/orders/{id}", get(handler.clone()))
        .route("/orders", axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, hits)
}

#[tokio::test]
async fn name_only_client_rides_through_dead_and_failing_instances() {
    let (good_a, hits_a) = server(StatusCode::OK).await;
    let (good_b, hits_b) = server(StatusCode::OK).await;
    let (failing, failing_hits) = server(StatusCode::SERVICE_UNAVAILABLE).await;
    for (bad, policy) in [closed_port_url(), failing.clone()]
        .into_iter()
        .flat_map(|bad| {
            [Policy::RoundRobin, Policy::LeastRequest, Policy::PeakEwma].map(|p| (bad.clone(), p))
        })
    {
        let refusing = bad != failing;
        let lb = LoadBalancer::builder()
            .supplier(StaticSupplier::new(
                "order-service",
                [bad, good_a.clone(), good_b.clone()],
            ))
            .policy(policy)
            .build();
        let orders = OrderServiceClient::builder()
            .load_balancer(lb.clone())
            .build()
            .unwrap();
        for id in 0..200 {
            assert_eq!(orders.get_order(id).await.unwrap(), "ok", "{policy:?}");
        }
        let counters = lb.counters("order-service").unwrap();
        if refusing {
            // A two-choice policy may never pick the instance it has no latency for; round
            // robin reaches it within three calls. Whoever meets the refusal ejects at once,
            // so it costs exactly one failed attempt.
            if policy == Policy::RoundRobin {
                assert_eq!(counters.failed, 1, "{policy:?} {counters:?}");
            }
            assert!(counters.failed <= 1, "{policy:?} {counters:?}");
            assert_eq!(
                counters.ejections, counters.failed,
                "a connect failure ejects at once: {policy:?} {counters:?}"
            );
        }
    }
    assert!(hits_a.load(Ordering::SeqCst) > 0 && hits_b.load(Ordering::SeqCst) > 0);
    assert!(
        failing_hits.load(Ordering::SeqCst) > 0,
        "the failing instance was tried"
    );
}

#[tokio::test]
async fn post_answered_503_is_not_retried() {
    let (failing, failing_hits) = server(StatusCode::SERVICE_UNAVAILABLE).await;
    let (good, good_hits) = server(StatusCode::OK).await;
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::new("order-service", [failing, good]))
        .ejection(feign_lb::Ejection::disabled())
        .build();
    assert!(lb.retry_policy("order-service").is_some());
    let orders = OrderServiceClient::builder()
        .load_balancer(lb)
        .build()
        .unwrap();
    let mut errors = 0;
    for _ in 0..10 {
        if let Err(e) = orders.create("book").await {
            assert_eq!(e.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
            errors += 1;
        }
    }
    assert_eq!(
        errors, 5,
        "round robin sends half the calls to the failing instance"
    );
    assert_eq!(failing_hits.load(Ordering::SeqCst), 5);
    assert_eq!(
        good_hits.load(Ordering::SeqCst),
        5,
        "no retry reached the good instance"
    );
}
