//! Skipped tests that say so where a reader of the test output looks.
//!
//! The test harness captures what `println!` and `eprintln!` write, and shows it only for a
//! failing test, so a test that returns early with a printed reason would pass silently. This
//! writes to the process's standard error directly, past the capture: the `skipped: <why>` line
//! stands in the normal `cargo test` output, next to the test reported `ok`.

use std::io::Write;

/// Writes `skipped: <why>` (with the test's name when the harness gave the thread one) to the
/// process's standard error, uncaptured.
pub fn announce(why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(std::io::stderr().lock(), "skipped: {test}: {why}");
}
