//! `feign-soak`: the whole stack under several faults at once, over time.
//!
//! Run with `cargo run -p feign-soak -- --duration 120s --report target/soak-report.txt`.
//!
//! In one process, on 127.0.0.1: three embedded registries peered with each other, six
//! instances of each of two services registering through feign-eureka, and a caller per service
//! calling through a `#[feign_client]` trait resolved by feign-eureka and feign-lb, GETs and
//! POSTs at a fixed rate. A fault plan derived from the seed stops, aborts and restarts
//! instances, kills and restarts registry nodes, slows one registry and switches fault proxies
//! in front of some instances (latency, resets, blackholes, half-open connections). Then it
//! checks that no GET failed while its service had a healthy instance, that no POST was
//! executed twice, that the registries converge, and that memory, file descriptors and tasks
//! come back to where they started; prints each check PASS or FAIL and exits non-zero on a
//! FAIL. It stops by itself.

mod caller;
mod fleet;
mod gauges;
mod instance;
mod journal;
mod ledger;
mod live;
mod load;
mod pki;
mod plan;
mod proxy;
mod registries;
mod report;
mod resources;
mod run;
mod settings;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

/// A chaos soak of feign-rs.
#[derive(Debug, Parser)]
#[command(name = "feign-soak")]
struct Args {
    /// How long the run lasts, e.g. `120s`, `30m` (at least 60 s).
    #[arg(long, default_value = "120s", value_parser = parse_duration)]
    duration: Duration,
    /// Seeds the fault plan, the call mix and every random choice of the stack.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Calls per second, both services together.
    #[arg(long, default_value_t = 150, value_parser = clap::value_parser!(u32).range(1..=5000))]
    rate: u32,
    /// Also write the report to this file.
    #[arg(long)]
    report: Option<PathBuf>,
}

/// `90s`, `30m`, `1h` or plain seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 120s or 30m"))?;
    let seconds = match unit {
        "" | "s" => number,
        "m" => number * 60,
        "h" => number * 3600,
        _ => return Err(format!("unknown unit {unit:?}: use s, m or h")),
    };
    Ok(Duration::from_secs(seconds))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let settings = settings::Settings {
        duration: args.duration,
        seed: args.seed,
        rate: args.rate,
    };
    let Some(gauges) = gauges::Gauges::install() else {
        eprintln!("soak could not run: a metrics recorder was installed already");
        return ExitCode::FAILURE;
    };
    let outcome = match run::run(settings, gauges).await {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("soak could not run: {error}");
            return ExitCode::FAILURE;
        }
    };
    let report = outcome.render();
    println!("\n{report}");
    if let Some(path) = &args.report {
        if let Err(error) = std::fs::write(path, &report) {
            eprintln!("could not write the report to {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if outcome.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
