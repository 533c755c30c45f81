//! Heap allocations per call, counted with an instrumented global allocator: a load-independent
//! view of the framework's per-call cost. No harness, so no other thread allocates meanwhile: this
//! is why it is a binary of its own, outside `tests/it`.
//!
//! Run with `cargo test -p feign-rs-core --test allocations -- --nocapture`.

use std::convert::Infallible;

use bytes::Bytes;
use feign_core::Retryer;
use feign_test_support::order::{OrderClient, GET_ORDER};
use http_body_util::Full;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

const CALLS: usize = 1000;

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let noop = tower::service_fn(|_req: http::Request<Bytes>| async {
        Ok::<_, Infallible>(
            http::Response::builder()
                .status(204)
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
    });
    let client = OrderClient::builder()
        .url("http://orders.test")
        .tower_client(noop)
        .retryer(Retryer::never())
        .build()
        .unwrap();
    let core = client.core();

    let expansion = per_call(|| {
        let mut req = core.request(&GET_ORDER);
        req.path(0, &42u64);
        drop(core.prepare(req).unwrap());
    });
    // All calls in one `block_on`: tokio boxes a future it blocks on past a size that is
    // smaller in debug builds, which would count one allocation per call that is not the call's.
    let whole_call = runtime.block_on(async {
        client.cancel("42").await.unwrap();
        let region = Region::new(GLOBAL);
        for _ in 0..CALLS {
            client.cancel("42").await.unwrap();
        }
        region.change().allocations as f64 / CALLS as f64
    });
    println!("allocations per template expansion: {expansion:.1}");
    println!("allocations per whole call (no-op tower service): {whole_call:.1}");
    assert!(
        expansion <= 4.0,
        "template expansion allocates {expansion} times"
    );
    assert!(
        whole_call <= 10.0,
        "a whole call allocates {whole_call} times"
    );
    println!("1 passed, 0 failed");
}

fn per_call(mut f: impl FnMut()) -> f64 {
    f();
    let region = Region::new(GLOBAL);
    for _ in 0..CALLS {
        f();
    }
    region.change().allocations as f64 / CALLS as f64
}
