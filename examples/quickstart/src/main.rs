//! Run with `cargo run -p quickstart` (add `-- --keep-running` to keep the registry, its
//! dashboard and the instances up until Ctrl-C).
//!
//! Everything binds to 127.0.0.1 and stops by itself; the process exits non-zero when a step
//! does not behave as it prints.

use std::process::ExitCode;

use quickstart::{run, Options};

#[tokio::main]
async fn main() -> ExitCode {
    let keep_running = std::env::args().skip(1).any(|arg| arg == "--keep-running");
    match run(Options { keep_running }).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("quickstart failed: {err}");
            ExitCode::FAILURE
        }
    }
}
