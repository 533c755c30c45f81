//! Run with `cargo run -p observability`.
//!
//! Two `order-service` instances on 127.0.0.1 behind feign-lb, a client with a refreshing
//! bearer token and W3C `traceparent` propagation, a few calls (one failing with 503 after its
//! retries), then the spans and metrics they produced. Stops by itself; exits non-zero when
//! something does not behave as printed.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let (spans, metrics) = observability::install();
    match observability::run(&spans, &metrics).await {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("observability example failed: {err}");
            ExitCode::FAILURE
        }
    }
}
