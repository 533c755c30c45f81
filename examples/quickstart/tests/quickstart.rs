//! Runs the quickstart exactly as `cargo run -p quickstart` does and checks what it reports.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quickstart_runs_every_step() {
    let report = quickstart::run(quickstart::Options::default())
        .await
        .expect("every quickstart step behaves as it prints");
    assert_eq!(report.spread.len(), 3, "calls reached every instance");
    assert_eq!(report.spread.values().sum::<usize>(), 30);
    assert_eq!(report.burst_failures, 0, "no call of the burst failed");
    assert_eq!(report.burst_successes, 120);
    assert_eq!(report.registered_at_end, 2, "the stopped instance is gone");
    assert!(
        report.change_reached_caller < std::time::Duration::from_secs(1),
        "push discovery brought the deregistration in {:?}",
        report.change_reached_caller
    );
}

/// Run as `cargo run -p quickstart` runs it, it prints no dashboard URL: the registry stops when
/// the steps end, so a URL printed then would already be closed. `--keep-running` prints it
/// while it is served.
#[test]
fn the_quickstart_prints_no_url_it_is_about_to_close() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .output()
        .expect("the quickstart starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        !stdout.lines().any(|line| line.starts_with("dashboard")),
        "{stdout}"
    );
    assert!(stdout.contains("--keep-running"), "{stdout}");
}
