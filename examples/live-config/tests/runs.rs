//! Runs the example as `cargo run -p live-config` does and checks that every step passed.

#[test]
fn the_example_runs_and_every_step_holds() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_live-config"))
        .env_remove("RUST_LOG")
        .output()
        .expect("the example starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.matches("ok: ").count(), 7, "{stdout}");
    assert!(stdout.trim_end().ends_with("done"), "{stdout}");
    // The bad value is logged with its key and its file.
    assert!(
        stderr.contains("read-timeout") && stderr.contains("application.yml"),
        "{stderr}"
    );
}
