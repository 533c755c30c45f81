//! The whole pipeline against an in-process server, next to raw reqwest doing the same call,
//! and against a no-op tower service to isolate the framework's own CPU per call.
//!
//! Run with `cargo bench -p feign-rs-core --bench pipeline`.

use std::convert::Infallible;

use axum::extract::Path;
use axum::routing::get;
use axum::{Json, Router};
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use feign_core::Retryer;
use feign_test_support::{serve, Order, OrderClient};
use http_body_util::{BodyExt, Full};
use tower::ServiceExt;

fn noop_service() -> impl tower::Service<
    http::Request<Bytes>,
    Response = http::Response<Full<Bytes>>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + Sync
       + 'static {
    tower::service_fn(|_req: http::Request<Bytes>| async {
        Ok::<_, Infallible>(
            http::Response::builder()
                .status(204)
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
    })
}

fn pipeline(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    // A plain server that keeps nothing: a recording one would grow with every call and tax
    // whichever variant runs later.
    let url = rt.block_on(serve(Router::new().route(
        "/api/orders/{id}",
        get(|Path(id): Path<u64>| async move {
            Json(Order {
                id,
                item: "book".into(),
            })
        }),
    )));
    let feign = OrderClient::builder()
        .url(&url)
        .retryer(Retryer::never())
        .build()
        .unwrap();
    let raw = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    let mut group = c.benchmark_group("pipeline");
    let order_url = format!("{url}/api/orders/42");
    // Each loopback variant runs twice, in the order A B B A, so neither always runs first on
    // a cold connection pool or last on a warm machine: compare the pairs, not one line.
    for round in ["1", "2"] {
        let feign_first = round == "2";
        for feign_turn in [feign_first, !feign_first] {
            if feign_turn {
                group.bench_function(format!("feign_get_json_loopback/{round}"), |b| {
                    b.to_async(&rt)
                        .iter(|| async { feign.get_order(&42).await.unwrap() });
                });
            } else {
                group.bench_function(format!("reqwest_get_json_loopback/{round}"), |b| {
                    b.to_async(&rt).iter(|| async {
                        let response = raw
                            .get(&order_url)
                            .header("accept", "application/json")
                            .send()
                            .await
                            .unwrap();
                        let body = response.error_for_status().unwrap().bytes().await.unwrap();
                        serde_json::from_slice::<Order>(&body).unwrap()
                    });
                });
            }
        }
    }

    let in_process = OrderClient::builder()
        .url("http://orders.test")
        .tower_client(noop_service())
        .retryer(Retryer::never())
        .build()
        .unwrap();
    group.bench_function("feign_unit_call_noop_service", |b| {
        b.to_async(&rt)
            .iter(|| async { in_process.cancel("42").await.unwrap() });
    });
    let service = noop_service();
    group.bench_function("direct_noop_service", |b| {
        b.to_async(&rt).iter(|| async {
            let request = http::Request::delete("http://orders.test/api/orders/42")
                .body(Bytes::new())
                .unwrap();
            let response = service.clone().oneshot(request).await.unwrap();
            response.into_body().collect().await.unwrap().to_bytes()
        });
    });
    group.finish();
}

#[allow(missing_docs)]
mod group {
    use super::*;
    criterion_group!(benches, pipeline);
}

criterion_main!(group::benches);
