//! Run with `cargo run -p files` (a 256 MiB file); `-- --size-mib N` or `FILES_SIZE_MIB=N`
//! sets the file's size.
//!
//! Everything binds to 127.0.0.1, writes only under a temporary directory it removes, and
//! stops by itself; the process exits non-zero when a transfer or a check fails.

use std::process::ExitCode;

use files::{run, Options};

#[tokio::main]
async fn main() -> ExitCode {
    let options = match Options::from_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(err) => {
            eprintln!("files: {err}");
            return ExitCode::from(2);
        }
    };
    match run(options).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("files failed: {err}");
            ExitCode::FAILURE
        }
    }
}
