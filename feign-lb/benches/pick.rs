//! Cost of one pick plus its completion report for every policy at 10 to 10,000 instances
//! (`pick/*`), and of the pick alone (`choose/*`).
//!
//! Run with `cargo bench -p feign-lb --bench pick`.

#![allow(missing_docs)] // `criterion_group!` generates an undocumented public function

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use feign_core::{AttemptOutcome, ChooseRequest, Resolver};
use feign_lb::{LoadBalancer, Policy, ServiceInstance, StaticSupplier};
use http::{HeaderMap, Method, StatusCode};

fn instances(n: usize) -> Vec<ServiceInstance> {
    (0..n)
        .map(|i| {
            ServiceInstance::new("svc", format!("10.0.{}.{}", i / 250, i % 250), 8080)
                .with_metadata("weight", (1 + i % 5).to_string())
        })
        .collect()
}

fn pick(c: &mut Criterion) {
    let headers = HeaderMap::new();
    for policy in Policy::ALL {
        let mut group = c.benchmark_group(format!("pick/{policy:?}"));
        group
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_millis(500));
        for n in [10usize, 100, 1_000, 10_000] {
            let supplier = StaticSupplier::empty().with_instances("svc", instances(n));
            let lb = LoadBalancer::builder()
                .supplier(supplier)
                .policy(policy)
                .seed(1)
                .build();
            group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                b.iter(|| {
                    let req = ChooseRequest::new("svc", "Svc#get", &Method::GET, &headers);
                    let chosen = lb.choose(black_box(&req)).expect("an instance");
                    if let Some(observer) = &chosen.observer {
                        observer.on_complete(
                            &AttemptOutcome::Response(StatusCode::OK),
                            Duration::from_millis(2),
                        );
                    }
                    black_box(chosen)
                })
            });
        }
        group.finish();
    }
}

/// The pick alone (the attempt is never reported, so in-flight counts only grow: the
/// two-choice policies then compare counts that keep moving, as under real load).
fn choose_only(c: &mut Criterion) {
    let headers = HeaderMap::new();
    for policy in Policy::ALL {
        let mut group = c.benchmark_group(format!("choose/{policy:?}"));
        group
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_millis(500));
        for n in [10usize, 1_000] {
            let supplier = StaticSupplier::empty().with_instances("svc", instances(n));
            let lb = LoadBalancer::builder()
                .supplier(supplier)
                .policy(policy)
                .seed(1)
                .build();
            group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                b.iter(|| {
                    let req = ChooseRequest::new("svc", "Svc#get", &Method::GET, &headers);
                    black_box(lb.choose(black_box(&req)).expect("an instance"))
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, pick, choose_only);
criterion_main!(benches);
