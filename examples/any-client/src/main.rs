//! Run with `cargo run -p any-client`.
//!
//! Three local instances of `order-service`; a plain `reqwest::Client` and a hyper client call
//! `http://order-service/...` through feign-lb; one instance stops and the calls go on. Stops by
//! itself in about a second; the process exits non-zero when a step does not behave as it prints.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match any_client::run().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("any-client example failed: {err}");
            ExitCode::FAILURE
        }
    }
}
