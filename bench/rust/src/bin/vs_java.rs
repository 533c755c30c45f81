//! Against Java: the feign + load balancer client and the Spring Cloud OpenFeign + Spring Cloud
//! LoadBalancer client of `bench/java/`, each in its own process, driven at the same
//! concurrency and call count against the same three in-process hyper servers. Reports
//! requests/s, p50, p99 and resident memory of each client process; the order of the two
//! alternates between runs, and every figure is the median over the runs.
//!
//! Build the Java side first with `bench/java/build.sh`, then run with
//! `cargo run --release -p feign-bench --bin vs-java -- --runs 5`.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use clap::Parser;
use feign_bench::backend::{Backend, ServerRuntime};
use feign_bench::client::OrderService;
use feign_bench::figures::vs_java::{clients_of, ratios_of, Measured, Report, Side};
use feign_bench::load::{closed_loop, Budget};
use feign_bench::memory::resident;
use feign_bench::topology::{feign_balanced, static_balancer, SetupResult};
use feign_lb::Policy;

/// Command-line settings.
#[derive(Debug, Parser)]
#[command(about = "feign-rs against Spring Cloud OpenFeign + LoadBalancer")]
struct Args {
    /// Repetitions; medians are reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Concurrencies to measure (closed loop).
    #[arg(long, value_delimiter = ',', default_values_t = [16, 64])]
    concurrency: Vec<usize>,
    /// Measured calls per client and run.
    #[arg(long, default_value_t = 100_000)]
    requests: u64,
    /// Unmeasured calls first (JIT, connection pools).
    #[arg(long, default_value_t = 20_000)]
    warmup: u64,
    /// The Java benchmark jar.
    #[arg(long, default_value_os_t = default_jar())]
    jar: PathBuf,
    /// The `java` command.
    #[arg(long, default_value = "java")]
    java: String,
    /// Worker threads of the servers' runtime.
    #[arg(long, default_value_t = 2)]
    server_threads: usize,
    /// Internal: act as the Rust client process against these comma-separated URLs.
    #[arg(long, hide = true, value_delimiter = ',')]
    client_targets: Vec<String>,
}

fn default_jar() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../java/target/feign-java-bench-0.0.1.jar")
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("vs-java: cannot start a runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let result = if args.client_targets.is_empty() {
        runtime.block_on(compare(&args))
    } else {
        runtime.block_on(rust_client(&args))
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("vs-java: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The Rust client process: prints one `RUST_BENCH` line shaped like the Java one.
async fn rust_client(args: &Args) -> SetupResult<()> {
    let concurrency = args.concurrency.first().copied().unwrap_or(16);
    let client = feign_balanced(static_balancer(&args.client_targets, Policy::RoundRobin))?;
    let call = move |id: u64| {
        let client = client.clone();
        async move { client.get_order(id).await.is_ok_and(|order| order.id == id) }
    };
    let warmup = closed_loop(concurrency, Budget::Requests(args.warmup), call.clone()).await;
    let run = closed_loop(concurrency, Budget::Requests(args.requests), call).await;
    let memory = resident().ok_or("cannot read /proc/self/status")?;
    println!(
        "RUST_BENCH concurrency={concurrency} requests={} rps={:.0} p50_us={} p99_us={} rss_kb={} peak_rss_kb={} errors={}",
        args.requests,
        run.rps(),
        run.latencies.p50_us(),
        run.latencies.p99_us(),
        memory.rss_kb,
        memory.peak_kb,
        run.errors
    );
    if warmup.errors + run.errors > 0 {
        return Err(format!("{} calls failed", warmup.errors + run.errors).into());
    }
    Ok(())
}

/// Runs a client process to completion (at most 10 minutes) and parses its report line.
async fn run_child(mut command: tokio::process::Command, prefix: &str) -> SetupResult<Report> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(600), command.output())
        .await
        .map_err(|_| format!("{prefix} client did not finish within 10 minutes"))??;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match Report::parse(&stdout, prefix) {
        Some(report) if output.status.success() => Ok(report),
        _ => Err(format!(
            "{prefix} client failed ({}): {}{}",
            output.status,
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        )
        .into()),
    }
}

async fn compare(args: &Args) -> SetupResult<()> {
    if !args.jar.is_file() {
        return Err(format!(
            "no Java benchmark jar at {}: build it with bench/java/build.sh",
            args.jar.display()
        )
        .into());
    }
    let servers = ServerRuntime::new(args.server_threads)?;
    let backends: Vec<Backend> = (0..3)
        .map(|_| Backend::start(&servers.handle()))
        .collect::<Result<_, _>>()?;
    let targets = backends
        .iter()
        .map(Backend::url)
        .collect::<Vec<_>>()
        .join(",");
    let me = std::env::current_exe()?;
    eprintln!(
        "vs-java: {} runs x {:?} concurrency, {} calls after {} warm-up calls, servers on {} threads",
        args.runs, args.concurrency, args.requests, args.warmup, args.server_threads
    );

    let mut lines = Vec::new();
    for run in 0..args.runs {
        for &concurrency in &args.concurrency {
            for turn in 0..2 {
                let side = if (run + turn) % 2 == 0 {
                    Side::FeignRs
                } else {
                    Side::Spring
                };
                let report = match side {
                    Side::FeignRs => {
                        let mut command = tokio::process::Command::new(&me);
                        command.args([
                            format!("--client-targets={targets}"),
                            format!("--concurrency={concurrency}"),
                            format!("--requests={}", args.requests),
                            format!("--warmup={}", args.warmup),
                        ]);
                        run_child(command, "RUST_BENCH").await?
                    }
                    Side::Spring => {
                        let mut command = tokio::process::Command::new(&args.java);
                        command.arg("-jar").arg(&args.jar).args([
                            format!("--bench.targets={targets}"),
                            format!("--bench.concurrency={concurrency}"),
                            format!("--bench.requests={}", args.requests),
                            format!("--bench.warmup={}", args.warmup),
                        ]);
                        run_child(command, "JAVA_BENCH").await?
                    }
                };
                let line = Measured {
                    run: run + 1,
                    concurrency,
                    side,
                    report,
                };
                eprintln!("{line}");
                lines.push(line);
            }
        }
    }
    println!(
        "Against Java: {} measured calls after {} warm-up calls, closed loop\n\n{}\n{}",
        args.requests,
        args.warmup,
        clients_of(&lines),
        ratios_of(&lines)
    );
    Ok(())
}
