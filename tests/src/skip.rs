//! Skipped tests that say so where a reader of the test output looks.
//!
//! The test harness captures what `println!` and `eprintln!` write, and shows it only for a
//! failing test, so a test that returns early with a printed reason would pass silently. This
//! writes to the process's standard error directly, past the capture: the `skipped: <why>` line
//! stands in the normal `cargo test` output, next to the test reported `ok`.

use std::io::Write;

/// Writes `skipped: <test>: <why>` to the process's standard error, uncaptured. The test's
/// name is the name the harness gives its thread; on a runtime's worker thread it is left out.
pub fn announce(why: &str) {
    let thread = std::thread::current();
    let mut stderr = std::io::stderr().lock();
    let _ = match thread.name().filter(|name| !name.starts_with("tokio-")) {
        Some(test) => writeln!(stderr, "skipped: {test}: {why}"),
        None => writeln!(stderr, "skipped: {why}"),
    };
}
