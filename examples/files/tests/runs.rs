//! Runs the example's binary as `cargo run -p files` does, with a small file, and checks that it
//! stops by itself, succeeds, and leaves nothing in the temporary directory.

use std::process::Command;

#[test]
fn the_example_moves_a_file_both_ways_and_stops_by_itself() {
    let temp = std::env::temp_dir().join(format!("files-example-test-{}", std::process::id()));
    std::fs::create_dir(&temp).expect("a temporary directory");
    let output = Command::new(env!("CARGO_BIN_EXE_files"))
        .args(["--size-mib", "8"])
        .env("TMPDIR", &temp)
        .env_remove("FILES_SIZE_MIB")
        .output()
        .expect("the example starts");
    let left: Vec<_> = std::fs::read_dir(&temp)
        .expect("the temporary directory")
        .collect();
    let _ = std::fs::remove_dir_all(&temp);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(left.is_empty(), "the example left {left:?} behind");
    for line in [
        "1. uploaded as a streamed body",
        "the instance's sha256 matches",
        "2. uploaded as multipart/form-data",
        "3. its metadata",
        "8 MiB from 127.0.0.1:",
        "size on disk and sha256 match",
        "5. the 4 calls went to",
        "refused by the TLS handshake",
        "peak RSS",
    ] {
        assert!(stdout.contains(line), "no {line:?} in:\n{stdout}");
    }
    assert!(
        stdout.trim_end().starts_with("ca ") && stdout.contains("\ndone in "),
        "{stdout}"
    );
}

#[test]
fn a_bad_size_is_refused_before_anything_starts() {
    let output = Command::new(env!("CARGO_BIN_EXE_files"))
        .args(["--size-mib", "0"])
        .output()
        .expect("the example starts");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the size must be 1 to 8192 MiB"),
        "{stderr}"
    );
}
