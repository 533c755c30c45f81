//! Runs the example exactly as `cargo run -p any-client` does and checks what it reports.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_runs_every_step() {
    let report = any_client::run()
        .await
        .expect("every step behaves as it prints");
    assert_eq!(report.reqwest_answers.values().sum::<usize>(), 6);
    assert!(
        report.reqwest_answers.values().all(|&n| n == 2),
        "{report:?}"
    );
    assert_eq!(report.hyper_answers.len(), 3, "{report:?}");
    assert_eq!(report.errors_after_stop, 0);
    assert_eq!(report.ejected.len(), 1);
    assert!(report.unknown_service.contains("no instance"), "{report:?}");
}
