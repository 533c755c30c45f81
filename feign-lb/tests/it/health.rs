//! Active health checks against loopback backends: a failing instance is checked out, and when
//! every instance fails its check the supplier serves them all rather than an empty list.

use std::sync::Arc;
use std::time::{Duration, Instant};

use feign_core::{ChooseRequest, Resolver};
use feign_lb::StaticSupplier;
use feign_lb::{HealthCheckOptions, HealthCheckSupplier, InstanceSupplier, LoadBalancer};
use feign_test_support::backend::{Backend, Mode};
use http::{HeaderMap, Method};

const SERVICE: &str = "order-service";

fn ports(supplier: &HealthCheckSupplier) -> Vec<u16> {
    let list = supplier.instances(SERVICE).expect("the service is known");
    let mut ports: Vec<u16> = list.iter().map(|instance| instance.port()).collect();
    ports.sort_unstable();
    ports
}

fn health_hits(backend: &Backend) -> usize {
    backend
        .log()
        .iter()
        .filter(|(_, path)| path == "/health")
        .count()
}

/// Polls `supplier` until `done` holds, asserting on every read that the list is never empty.
async fn served_until(
    supplier: &HealthCheckSupplier,
    done: impl Fn(&[u16]) -> bool,
    what: &str,
) -> Vec<u16> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let served = ports(supplier);
        assert!(!served.is_empty(), "an empty list was served while {what}");
        if done(&served) {
            return served;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: still serving {served:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn every_instance_failing_its_check_serves_all_rather_than_none() {
    let backends: Vec<Backend> = (0..3).map(|_| Backend::start()).collect();
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let mut all: Vec<u16> = backends.iter().map(|b| b.addr.port()).collect();
    all.sort_unstable();
    // Panic only when every check fails, so a partial failure shows in what is served.
    let options = HealthCheckOptions::new()
        .path("/health")
        .interval(Duration::from_millis(20))
        .timeout(Duration::from_millis(500))
        .panic_threshold(1.0);
    let supplier =
        HealthCheckSupplier::with_options(Arc::new(StaticSupplier::new(SERVICE, &urls)), options);
    assert_eq!(
        ports(&supplier),
        all,
        "healthy until a check says otherwise"
    );

    // One instance recovers first: the checks run, and only it is served.
    for backend in &backends[1..] {
        backend.set_mode(Mode::Unavailable);
    }
    let first = backends[0].addr.port();
    served_until(&supplier, |s| s == [first], "two instances fail").await;

    // Now all fail: several full rounds of checks, and every read in between serves all three.
    backends[0].set_mode(Mode::Unavailable);
    served_until(&supplier, |s| s == all, "every instance fails").await;
    let rounds_before = backends.iter().map(health_hits).min().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while backends.iter().map(health_hits).min().unwrap() < rounds_before + 5 {
        assert_eq!(ports(&supplier), all, "every instance fails");
        assert!(Instant::now() < deadline, "the checks stopped running");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    // The balancer over it still has somewhere to send a call.
    let lb = LoadBalancer::builder().supplier(supplier.clone()).build();
    let headers = HeaderMap::new();
    let request = ChooseRequest::new(SERVICE, "Orders#get", &Method::GET, &headers);
    let chosen = lb
        .choose(&request)
        .expect("an instance while every check fails");
    assert!(
        urls.iter()
            .any(|url| chosen.base_url().starts_with(url.as_str())),
        "{}",
        chosen.base_url()
    );

    // And a recovery is seen again.
    backends[2].set_mode(Mode::Ok);
    let last = backends[2].addr.port();
    served_until(&supplier, |s| s == [last], "one instance recovers").await;
}
