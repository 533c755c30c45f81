//! Runs the example as `cargo run -p testing` does and checks what it reports.

#[tokio::test]
async fn the_example_runs_every_step() {
    let report = testing::run()
        .await
        .expect("every step behaves as it prints");
    assert_eq!(
        report.steps,
        [
            "the POST went out as expected",
            "a 503 was retried",
            "a slow answer timed out",
            "a reset instance was failed over",
        ]
    );
    assert_eq!(report.retried_requests, 2);
    assert_eq!(report.fleet_requests[1], 4);
    assert!(report.fleet_requests[0] > 0, "{:?}", report.fleet_requests);
}
