//! What the circuit breaker and bulkhead cost: a call through both against a no-op tower
//! service (compare with `pipeline/feign_unit_call_noop_service`), and a call an open breaker
//! refuses (no network I/O at all).
//!
//! Run with `cargo bench -p feign-rs-core --bench resilience`.

use std::convert::Infallible;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use feign_core::{BulkheadConfig, CircuitBreakerConfig, Retryer};
use feign_test_support::OrderClient;
use http_body_util::Full;

fn service(
    status: u16,
) -> impl tower::Service<
    http::Request<Bytes>,
    Response = http::Response<Full<Bytes>>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + Sync
       + 'static {
    tower::service_fn(move |_req: http::Request<Bytes>| async move {
        Ok::<_, Infallible>(
            http::Response::builder()
                .status(status)
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
    })
}

fn resilience(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let guarded = OrderClient::builder()
        .url("http://orders.test")
        .tower_client(service(204))
        .retryer(Retryer::never())
        .circuit_breaker(CircuitBreakerConfig::default())
        .bulkhead(BulkheadConfig::default())
        .build()
        .unwrap();
    let failing = OrderClient::builder()
        .url("http://orders.test")
        .tower_client(service(503))
        .retryer(Retryer::never())
        .circuit_breaker(
            CircuitBreakerConfig::default()
                .sliding_window_size(1)
                .minimum_number_of_calls(1),
        )
        .build()
        .unwrap();
    rt.block_on(async {
        assert!(failing.cancel("42").await.unwrap_err().is_status());
        assert!(failing.cancel("42").await.unwrap_err().is_circuit_open());
    });

    let mut group = c.benchmark_group("resilience");
    group.bench_function("breaker_and_bulkhead_unit_call_noop_service", |b| {
        b.to_async(&rt)
            .iter(|| async { guarded.cancel("42").await.unwrap() });
    });
    group.bench_function("open_breaker_rejects", |b| {
        b.to_async(&rt)
            .iter(|| async { failing.cancel("42").await.unwrap_err() });
    });
    group.finish();
}

#[allow(missing_docs)]
mod group {
    use super::*;
    criterion_group!(benches, resilience);
}

criterion_main!(group::benches);
