//! Run with `cargo run -p test-double`.
//!
//! Tests a checkout that calls an `OrderService` client against the client's generated test
//! double: rules per method, a refused call and its retry, an unknown order, a call no rule
//! answers. Nothing listens and nothing is sent; it stops by itself, non-zero when a step does
//! not behave as it prints.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match test_double::run().await {
        Ok(report) => {
            println!("reorder 7 placed {:?}", report.reordered);
            println!("reorder 8: {}", report.unknown);
            println!(
                "place_order was called {} times with {:?}",
                report.place_calls, report.placed
            );
            println!("reorder 9: {}", report.unanswered);
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("test-double example failed: {error}");
            ExitCode::FAILURE
        }
    }
}
