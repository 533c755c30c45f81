//! Cost of one pick plus its completion report for every policy at 10 to 10,000 instances
//! (`pick/*`), and of the pick alone, the `Resolver::choose` a call makes (`choose/*`). The
//! report is made as the pipeline makes it, with the instant the attempt ended, which the
//! pipeline reads anyway to time the attempt; `pick_self_timed/*` reports without it, so the
//! balancer reads the clock itself where it needs the time (Peak-EWMA). Next to them, the floor
//! of any pick that counts attempts in flight on a shared instance: cloning and dropping one
//! shared reference (`floor/arc_clone_drop`), measured in the same run so that a slow or noisy
//! machine shows as a slow floor.
//!
//! Run with `cargo bench -p feign-lb --bench pick`.

#![allow(missing_docs)] // `criterion_group!` generates an undocumented public function

use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use feign_core::resolve::{AttemptOutcome, ChooseRequest, Resolver};
use feign_lb::{LoadBalancer, Policy, ServiceInstance, StaticSupplier};
use http::{HeaderMap, Method, StatusCode};
use tokio::time::Instant;

fn instances(n: usize) -> Vec<ServiceInstance> {
    (0..n)
        .map(|i| {
            ServiceInstance::new("svc", format!("10.0.{}.{}", i / 250, i % 250), 8080)
                .with_metadata("weight", (1 + i % 5).to_string())
        })
        .collect()
}

/// Benches `step` (one pick, given the balancer and the request headers) for each of
/// `policies` at each of `sizes` instances, as group `name/<policy>/<instances>`.
fn per_policy(
    c: &mut Criterion,
    name: &str,
    policies: &[Policy],
    sizes: &[usize],
    step: impl Fn(&LoadBalancer, &HeaderMap),
) {
    let headers = HeaderMap::new();
    for &policy in policies {
        let mut group = c.benchmark_group(format!("{name}/{policy:?}"));
        group
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_millis(500));
        for &n in sizes {
            let supplier = StaticSupplier::empty().with_instances("svc", instances(n));
            let lb = LoadBalancer::builder()
                .supplier(supplier)
                .policy(policy)
                .seed(1)
                .build();
            group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                b.iter(|| step(&lb, &headers));
            });
        }
        group.finish();
    }
}

const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];

/// How the attempt of every pick ends: a response after 2 ms.
const OK: AttemptOutcome<'static> = AttemptOutcome::Response(StatusCode::OK);
const ELAPSED: Duration = Duration::from_millis(2);

/// A pick and the report of how its attempt ended, with the instant it ended as the pipeline
/// passes it: a stand-in here, moved on by the attempt's length at every pick.
fn pick(c: &mut Criterion) {
    let ended = Cell::new(Instant::now());
    per_policy(c, "pick", &Policy::ALL, &SIZES, |lb, headers| {
        let req = ChooseRequest::new("svc", "Svc#get", &Method::GET, headers);
        let chosen = lb.choose(black_box(&req)).expect("an instance");
        black_box(&chosen);
        ended.set(ended.get() + ELAPSED);
        chosen.complete_at(&OK, ELAPSED, ended.get());
    });
}

/// A pick and the report of how its attempt ended, without the instant: the balancer reads
/// the clock itself if it needs the time, which only Peak-EWMA does.
fn pick_self_timed(c: &mut Criterion) {
    per_policy(
        c,
        "pick_self_timed",
        &[Policy::PeakEwma],
        &SIZES,
        |lb, headers| {
            let req = ChooseRequest::new("svc", "Svc#get", &Method::GET, headers);
            let chosen = lb.choose(black_box(&req)).expect("an instance");
            black_box(&chosen);
            chosen.complete(&OK, ELAPSED);
        },
    );
}

/// The pick alone: the attempt is dropped unreported, which ends it as a cancelled call would.
fn choose_only(c: &mut Criterion) {
    per_policy(c, "choose", &Policy::ALL, &SIZES, |lb, headers| {
        let req = ChooseRequest::new("svc", "Svc#get", &Method::GET, headers);
        black_box(lb.choose(black_box(&req)).expect("an instance"));
    });
}

/// Two atomic read-modify-writes on one counter: what a pick's in-flight count costs at least.
fn floor(c: &mut Criterion) {
    let shared: Arc<dyn Send + Sync> = Arc::new(AtomicU64::new(0));
    c.bench_function("floor/arc_clone_drop", |b| {
        b.iter(|| drop(black_box(Arc::clone(black_box(&shared)))));
    });
}

criterion_group!(benches, pick, pick_self_timed, choose_only, floor);
criterion_main!(benches);
