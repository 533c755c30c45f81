//! Run with `cargo run -p resilience`.
//!
//! A local order-service on 127.0.0.1 fails on cue; a client with a circuit breaker, a bulkhead
//! and a fallback calls it. Everything stops by itself in a few seconds; the process exits
//! non-zero when a step does not behave as it prints.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match resilience::run().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("resilience example failed: {err}");
            ExitCode::FAILURE
        }
    }
}
