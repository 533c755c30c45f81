//! Template expansion: turning a method's compiled metadata and arguments into a request.
//!
//! Run with `cargo bench -p feign-rs-core --bench template`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use feign_test_support::order::{OrderClient, FIND, GET_ITEM, GET_ORDER};

fn expansion(c: &mut Criterion) {
    let client = OrderClient::builder()
        .url("http://127.0.0.1:1")
        .build()
        .unwrap();
    let core = client.core();
    let mut group = c.benchmark_group("template");
    group.bench_function("one_path_var", |b| {
        b.iter(|| {
            let mut req = core.request(&GET_ORDER);
            req.path(0, black_box(&42u64));
            core.prepare(req).unwrap()
        });
    });
    group.bench_function("two_path_vars_needing_escapes", |b| {
        b.iter(|| {
            let mut req = core.request(&GET_ITEM);
            req.path(0, black_box("a/b c"));
            req.path(1, black_box("ünï?"));
            core.prepare(req).unwrap()
        });
    });
    group.bench_function("query_and_header", |b| {
        b.iter(|| {
            let mut req = core.request(&FIND);
            req.query("status", black_box("open"));
            req.query("page-size", black_box(&50u32));
            req.header("X-Request-Id", black_box("0b3c1d"));
            core.prepare(req).unwrap()
        });
    });
    group.finish();
}

#[allow(missing_docs)]
mod group {
    use super::*;
    criterion_group!(benches, expansion);
}

criterion_main!(group::benches);
