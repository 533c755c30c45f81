//! Run with `cargo run -p testing`.
//!
//! An order-service client tested the way its tests would test it: against feign-test's
//! recording servers on 127.0.0.1, which check the exact requests it sends and answer with
//! scripted failures. Stops by itself in about a second; exits non-zero when a step does not
//! behave as it prints.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match testing::run().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("testing example failed: {err}");
            ExitCode::FAILURE
        }
    }
}
