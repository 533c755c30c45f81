//! Runs the example exactly as `cargo run -p resilience` does and checks what it reports.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_runs_every_step() {
    let report = resilience::run()
        .await
        .expect("every step behaves as it prints");
    assert_eq!(report.healthy_calls, 10);
    assert_eq!(
        report.requests_while_open, 0,
        "an open breaker sends nothing"
    );
    assert_eq!(report.trial_calls, 3);
    assert_eq!(report.bulkhead_admitted, 5);
    assert_eq!(report.bulkhead_refused, 45);
    assert_eq!(
        report.transitions,
        ["closed -> open", "open -> half_open", "half_open -> closed"]
    );
}
