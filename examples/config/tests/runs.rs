//! Runs the example as `cargo run -p config-example` does and checks that every step passed.

#[test]
fn the_example_runs_and_every_check_passes() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_config-example"))
        .env_remove("ZONE")
        .env_remove("RUST_LOG")
        .output()
        .expect("the example starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.matches("ok: ").count(), 6, "{stdout}");
    assert!(stdout.trim_end().ends_with("done"), "{stdout}");
    assert!(
        stderr.contains("--> GET"),
        "logger-level basic logs calls: {stderr}"
    );
    // Quiet: it opens with a line saying what it read, not a dump of every property, and its
    // piped log has no colour codes.
    let first = stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with("read ") && first.len() < 200, "{first}");
    assert!(
        !stderr.contains('\x1b'),
        "colour codes in a piped log: {stderr:?}"
    );
}

#[test]
fn a_wrong_zone_from_the_environment_is_visible() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_config-example"))
        .env("ZONE", "zone-b")
        .env_remove("RUST_LOG")
        .output()
        .expect("the example starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        !output.status.success(),
        "zone-b is not what the example expects: {stdout}"
    );
    assert!(stdout.contains("\"b1\": 20"), "{stdout}");
}
