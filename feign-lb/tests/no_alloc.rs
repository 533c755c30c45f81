//! A pick allocates nothing: counted with an instrumented global allocator. This test binary
//! has no harness (`harness = false`), so no other thread allocates while it counts.

use std::alloc::System;
use std::time::Duration;

use feign_core::resolve::{AttemptOutcome, ChooseRequest, Resolver};
use feign_lb::{LoadBalancer, Policy, ServiceInstance, StaticSupplier};
use http::{HeaderMap, Method, StatusCode};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn main() {
    picks_and_completions_do_not_allocate();
    println!("1 passed, 0 failed");
}

fn picks_and_completions_do_not_allocate() {
    let instances: Vec<ServiceInstance> = (0..100)
        .map(|i| {
            ServiceInstance::new("svc", "127.0.0.1", 1000 + i)
                .with_metadata("weight", (1 + i % 5).to_string())
                .with_metadata("zone", if i % 2 == 0 { "z1" } else { "z2" })
        })
        .collect();
    let supplier = StaticSupplier::empty().with_instances("svc", instances);
    let headers = HeaderMap::new();
    for policy in Policy::ALL {
        let lb = LoadBalancer::builder()
            .supplier(supplier.clone())
            .policy(policy)
            .seed(9)
            .build();
        let pick = || {
            let req = ChooseRequest::new("svc", "Svc#get", &Method::GET, &headers);
            let chosen = lb.choose(&req).expect("an instance");
            assert!(chosen.is_observed(), "an observer");
            chosen.complete(
                &AttemptOutcome::Response(StatusCode::OK),
                Duration::from_millis(3),
            );
        };
        for _ in 0..100 {
            pick(); // builds the snapshot and the service state once
        }
        let region = Region::new(GLOBAL);
        for _ in 0..10_000 {
            pick();
        }
        let stats = region.change();
        assert_eq!(stats.allocations, 0, "{policy:?}: {stats:?}");
        assert_eq!(stats.reallocations, 0, "{policy:?}: {stats:?}");
        println!("no_alloc {policy:?}: 0 allocations in 10000 picks");
    }
}
