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
use feign_bench::load::{closed_loop, Budget};
use feign_bench::memory::resident;
use feign_bench::stats::{format_us, median};
use feign_bench::table::Table;
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

/// What one client process printed.
#[derive(Debug, Clone, Default)]
struct Report {
    rps: f64,
    p50_us: f64,
    p99_us: f64,
    rss_kb: f64,
    peak_rss_kb: f64,
    errors: f64,
}

impl Report {
    /// Parses `PREFIX key=value ...` as bench/java/README.md specifies.
    fn parse(output: &str, prefix: &str) -> Option<Report> {
        let line = output.lines().find(|line| line.starts_with(prefix))?;
        let field = |name: &str| -> Option<f64> {
            line.split_whitespace()
                .filter_map(|pair| pair.split_once('='))
                .find(|(key, _)| *key == name)?
                .1
                .parse()
                .ok()
        };
        Some(Report {
            rps: field("rps")?,
            p50_us: field("p50_us")?,
            p99_us: field("p99_us")?,
            rss_kb: field("rss_kb")?,
            peak_rss_kb: field("peak_rss_kb")?,
            errors: field("errors")?,
        })
    }
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

    // reports[concurrency] = (rust runs, java runs)
    let mut reports = vec![(Vec::new(), Vec::new()); args.concurrency.len()];
    for run in 0..args.runs {
        for (c_index, &concurrency) in args.concurrency.iter().enumerate() {
            for side in 0..2 {
                let rust_turn = (run + side) % 2 == 0;
                if rust_turn {
                    let mut command = tokio::process::Command::new(&me);
                    command.args([
                        format!("--client-targets={targets}"),
                        format!("--concurrency={concurrency}"),
                        format!("--requests={}", args.requests),
                        format!("--warmup={}", args.warmup),
                    ]);
                    let report = run_child(command, "RUST_BENCH").await?;
                    log(run, concurrency, "feign-rs", &report);
                    reports[c_index].0.push(report);
                } else {
                    let mut command = tokio::process::Command::new(&args.java);
                    command.arg("-jar").arg(&args.jar).args([
                        format!("--bench.targets={targets}"),
                        format!("--bench.concurrency={concurrency}"),
                        format!("--bench.requests={}", args.requests),
                        format!("--bench.warmup={}", args.warmup),
                    ]);
                    let report = run_child(command, "JAVA_BENCH").await?;
                    log(run, concurrency, "Spring", &report);
                    reports[c_index].1.push(report);
                }
            }
            let (rust, java) = &reports[c_index];
            if let (Some(r), Some(j)) = (rust.last(), java.last()) {
                eprintln!(
                    "  run {} c={concurrency:<3} ratios    req/s feign-rs ÷ Spring {:.2}×  peak RSS feign-rs ÷ Spring {:.3}",
                    run + 1,
                    r.rps / j.rps,
                    r.peak_rss_kb / j.peak_rss_kb
                );
            }
        }
    }

    let mut table = Table::new([
        "concurrency",
        "client",
        "req/s",
        "p50",
        "p99",
        "RSS after",
        "peak RSS",
        "errors",
    ])
    .text_columns(2);
    let mut ratios = Table::new([
        "concurrency",
        "req/s feign-rs ÷ Spring",
        "goal ≥ 3×",
        "peak RSS feign-rs ÷ Spring",
        "goal ≤ 0.10",
    ]);
    for (c_index, &concurrency) in args.concurrency.iter().enumerate() {
        let (rust, java) = &reports[c_index];
        for (name, runs) in [
            ("feign-rs (feign + LB)", rust),
            ("Spring OpenFeign + LB", java),
        ] {
            table.row([
                concurrency.to_string(),
                name.to_owned(),
                format!("{:.0}", median(runs.iter().map(|r| r.rps))),
                format_us(median(runs.iter().map(|r| r.p50_us))),
                format_us(median(runs.iter().map(|r| r.p99_us))),
                format_kb(median(runs.iter().map(|r| r.rss_kb))),
                format_kb(median(runs.iter().map(|r| r.peak_rss_kb))),
                runs.iter().map(|r| r.errors).sum::<f64>().to_string(),
            ]);
        }
        let speed = median(rust.iter().zip(java).map(|(r, j)| r.rps / j.rps));
        let memory = median(
            rust.iter()
                .zip(java)
                .map(|(r, j)| r.peak_rss_kb / j.peak_rss_kb),
        );
        ratios.row([
            concurrency.to_string(),
            format!("{speed:.2}×"),
            verdict(speed >= 3.0),
            format!("{memory:.3}"),
            verdict(memory <= 0.10),
        ]);
    }
    println!(
        "Against Java: median of {} runs, {} measured calls after {} warm-up calls, closed loop\n",
        args.runs, args.requests, args.warmup
    );
    print!("{table}");
    println!();
    print!("{ratios}");
    Ok(())
}

fn log(run: usize, concurrency: usize, name: &str, report: &Report) {
    eprintln!(
        "  run {} c={concurrency:<3} {name:<9} {:>8.0} req/s  p50 {:>9}  p99 {:>9}  rss {:>9}  peak {:>9}",
        run + 1,
        report.rps,
        format_us(report.p50_us),
        format_us(report.p99_us),
        format_kb(report.rss_kb),
        format_kb(report.peak_rss_kb)
    );
}

fn format_kb(kb: f64) -> String {
    format!("{:.1} MiB", kb / 1024.0)
}

fn verdict(met: bool) -> String {
    if met { "met" } else { "MISSED" }.to_owned()
}
