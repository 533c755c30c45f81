//! Adaptive concurrency limits under overload: a server whose latency grows with its load
//! (`base + per-call × requests in flight`) gets a fixed offered load above what it can answer
//! (open loop: calls leave on schedule whatever the latency), through a feign client with no
//! limit, with fixed bulkheads, and with the adaptive limit. Reports goodput (calls answered
//! within the deadline, per second), what was shed, and the latency of the answered calls.
//! Every run takes each client in turn against a fresh server, the order reversing every other
//! run; each prints one line, and the table (`feign_bench::figures::adaptive`) gives the median
//! (min–max) over the runs.
//!
//! Run with `cargo run --release -p feign-bench --bin adaptive -- --runs 5`; `--help` for the
//! knobs.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use feign_bench::backend::ServerRuntime;
use feign_bench::figures::adaptive::{summary, Guard, Measured};
use feign_bench::load::{interleaved, open_loop, OpenCall};
use feign_bench::stats::Latencies;
use feign_core::resilience::AdaptiveLimitConfig;
use feign_core::{BulkheadConfig, Options, Retryer};
use feign_test_support::{loaded_service, Calls as _, CallsClient};

/// Command-line settings.
#[derive(Debug, Parser)]
#[command(about = "Goodput and p99 under overload: no limit, fixed bulkheads, adaptive limit")]
struct Args {
    /// Repetitions; medians are reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Calls started per second.
    #[arg(long, default_value_t = 1500)]
    rate: u32,
    /// Length of each run, in seconds.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// The server's latency alone, in milliseconds.
    #[arg(long, default_value_t = 10)]
    base_ms: u64,
    /// What each request in flight adds to it, in microseconds.
    #[arg(long, default_value_t = 1000)]
    per_call_us: u64,
    /// An answer later than this (from when the call was due) does not count as goodput.
    #[arg(long, default_value_t = 100)]
    deadline_ms: u64,
    /// The client's read timeout, in milliseconds: what bounds a call without a limit.
    #[arg(long, default_value_t = 1000)]
    timeout_ms: u64,
    /// The sizes of the fixed bulkheads to compare.
    #[arg(long, value_delimiter = ',', default_values_t = [25, 200])]
    bulkheads: Vec<u32>,
    /// The adaptive limit's tolerances to compare (1.25 is its default).
    #[arg(long, value_delimiter = ',', default_values_t = [1.25, 2.0])]
    tolerances: Vec<f64>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let servers = match ServerRuntime::new(1) {
        Ok(servers) => servers,
        Err(error) => {
            eprintln!("cannot start the server runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut guards = vec![Guard::None];
    guards.extend(args.bulkheads.iter().map(|&size| Guard::Bulkhead(size)));
    guards.extend(args.tolerances.iter().map(|&t| Guard::Adaptive(t)));

    let base = Duration::from_millis(args.base_ms);
    let per_call = Duration::from_micros(args.per_call_us);
    let deadline = Duration::from_millis(args.deadline_ms);
    println!(
        "server latency {} ms + {} µs per request in flight (at most {:.0} answers/s in all, {:.0}/s within the {} ms deadline); offered {}/s for {} s; read timeout {} ms\n",
        args.base_ms,
        args.per_call_us,
        1e6 / args.per_call_us.max(1) as f64,
        max_goodput(base, per_call, deadline),
        args.deadline_ms,
        args.rate,
        args.seconds,
        args.timeout_ms,
    );
    let mut lines = Vec::new();
    for run in 0..args.runs {
        for guard in interleaved(&guards, run) {
            match measure(&args, &servers, guard, run + 1).await {
                Ok(line) => {
                    println!("{line}");
                    lines.push(line);
                }
                Err(error) => {
                    eprintln!("adaptive: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    println!("\n{}", summary(&lines));
    ExitCode::SUCCESS
}

/// One client against a fresh server for one run.
async fn measure(
    args: &Args,
    servers: &ServerRuntime,
    guard: Guard,
    run: usize,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let base = Duration::from_millis(args.base_ms);
    let per_call = Duration::from_micros(args.per_call_us);
    let deadline = Duration::from_millis(args.deadline_ms);
    let (url, seen) = servers
        .handle()
        .spawn(loaded_service(base, per_call))
        .await
        .map_err(|error| format!("cannot start the server: {error}"))?;
    let client = client(&url, guard, Duration::from_millis(args.timeout_ms))?;
    let shed = Arc::new(AtomicUsize::new(0));
    let counted = shed.clone();
    let calls = open_loop(
        args.rate,
        Duration::from_secs_f64(args.seconds),
        move |_| {
            let (client, shed) = (client.clone(), counted.clone());
            async move {
                match client.call("ok").await {
                    Ok(_) => true,
                    Err(error) => {
                        if error.is_bulkhead_full() {
                            shed.fetch_add(1, Ordering::Relaxed);
                        }
                        false
                    }
                }
            }
        },
    )
    .await;
    let row = Row::of(&calls, shed.load(Ordering::Relaxed), deadline, args.seconds);
    Ok(Measured {
        run,
        guard,
        goodput: row.goodput,
        answered: row.answered.len() as f64 / args.seconds,
        shed: row.shed as f64 / args.seconds,
        failed: row.failed as f64 / args.seconds,
        p50_us: f64::from(row.answered.p50_us()),
        p99_us: f64::from(row.answered.p99_us()),
        peak_in_flight: seen.max_in_flight.load(Ordering::SeqCst) as u64,
    })
}

/// Answers per second within `deadline` at the best concurrency, for the table's caption.
fn max_goodput(base: Duration, per_call: Duration, deadline: Duration) -> f64 {
    let per_call = per_call.as_secs_f64().max(f64::EPSILON);
    let most = ((deadline.as_secs_f64() - base.as_secs_f64()) / per_call).floor();
    most.max(0.0) / deadline.as_secs_f64()
}

fn client(url: &str, guard: Guard, timeout: Duration) -> Result<CallsClient, feign_core::Error> {
    let builder = CallsClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .options(Options::new().read_timeout(timeout));
    match guard {
        Guard::None => builder.build(),
        Guard::Bulkhead(size) => builder
            .bulkhead(BulkheadConfig::default().max_concurrent_calls(size))
            .build(),
        Guard::Adaptive(tolerance) => builder
            .adaptive_concurrency(AdaptiveLimitConfig::default().tolerance(tolerance))
            .build(),
    }
}

/// One client's figures.
struct Row {
    goodput: f64,
    answered: Latencies,
    shed: usize,
    failed: usize,
}

impl Row {
    fn of(calls: &[OpenCall], shed: usize, deadline: Duration, seconds: f64) -> Row {
        let deadline_us = u32::try_from(deadline.as_micros()).unwrap_or(u32::MAX);
        let answered: Vec<u32> = calls
            .iter()
            .filter(|call| call.ok)
            .map(|call| call.latency_us)
            .collect();
        let failed = calls.len() - answered.len();
        Row {
            goodput: answered.iter().filter(|&&us| us <= deadline_us).count() as f64 / seconds,
            answered: Latencies::new(answered),
            shed,
            failed: failed.saturating_sub(shed),
        }
    }
}
