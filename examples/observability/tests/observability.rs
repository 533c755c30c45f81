//! Runs the example exactly as `cargo run -p observability` does and checks its report.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observability_example_runs_and_checks_itself() {
    let (spans, metrics) = observability::install();
    let report = observability::run(&spans, &metrics)
        .await
        .expect("every call and every span and metric behaves as printed");
    assert_eq!(report.spans.len(), 3);
    assert_eq!(report.token_fetches, 1);
    let printed = report.to_string();
    assert!(printed.contains("span \"GET /orders/{id}\""), "{printed}");
    assert!(
        printed.contains("http.client.request.duration{"),
        "{printed}"
    );
    assert!(!printed.contains(observability::TOKEN), "{printed}");
}
