//! Resilience under open-loop traffic, per balancing policy (calls leave on a fixed schedule
//! and latency counts from the scheduled time, so a stalled call cannot hide the next ones):
//!
//! - `killed`: three instances; one is killed a third into the run (its listener and every
//!   open connection close at once, as when the process dies, without deregistering). Reports
//!   the errors callers saw and the latency of the calls due in the second after the kill,
//!   next to a run without the kill.
//! - `slow`: the slow-backend case of feign-lb's scenario runner (`feign-lb/benches/slow_backend.rs`)
//!   with the same shape (11 instances at 5 ms, one 20× slower for the middle half), to draw
//!   the latency distribution per policy.
//!
//! Every latency figure is the median over the runs, errors are summed over them (with the worst
//! run); the charts merge the runs' calls. Run with
//! `cargo run --release -p feign-bench --bin lb-resilience -- --runs 5`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use feign_bench::backend::{Backend, ServerRuntime};
use feign_bench::chart::latency_percentiles;
use feign_bench::client::OrderService;
use feign_bench::load::{open_loop, OpenCall};
use feign_bench::stats::{format_us, median, Latencies};
use feign_bench::table::Table;
use feign_bench::topology::{feign_balanced, SetupResult};
use feign_lb::{LoadBalancer, Policy, SlowStart, StaticSupplier};

/// Which scenarios to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Scenario {
    Killed,
    Slow,
    All,
}

/// Command-line settings.
#[derive(Debug, Parser)]
#[command(about = "An instance killed or slow under open-loop traffic, per policy")]
struct Args {
    /// Repetitions; medians are reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Which scenario.
    #[arg(long, value_enum, default_value_t = Scenario::All)]
    scenario: Scenario,
    /// Calls started per second (open loop) in the `killed` scenario.
    #[arg(long, default_value_t = 1000)]
    kill_rate: u32,
    /// Length of each `killed` run, in seconds.
    #[arg(long, default_value_t = 4.5)]
    kill_seconds: f64,
    /// Calls started per second in the `slow` scenario.
    #[arg(long, default_value_t = 400)]
    slow_rate: u32,
    /// Length of each `slow` run, in seconds.
    #[arg(long, default_value_t = 6.0)]
    slow_seconds: f64,
    /// Service time of every instance, in milliseconds.
    #[arg(long, default_value_t = 5)]
    base_ms: u64,
    /// Where the SVG charts are written.
    #[arg(long, default_value_os_t = default_out_dir())]
    out_dir: PathBuf,
}

fn default_out_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../results")
}

const POLICIES: [(Policy, &str); 4] = [
    (Policy::RoundRobin, "RoundRobin"),
    (Policy::Random, "Random"),
    (Policy::LeastRequest, "LeastRequest"),
    (Policy::PeakEwma, "PeakEwma"),
];

/// The slow instance is this many times slower.
const SLOWDOWN: u32 = 20;

/// Instances in the `slow` scenario, as in feign-lb's runner.
const SLOW_INSTANCES: usize = 11;

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let result = async {
        let servers = ServerRuntime::new(2)?;
        if matches!(args.scenario, Scenario::Killed | Scenario::All) {
            killed(&args, &servers).await?;
        }
        if matches!(args.scenario, Scenario::Slow | Scenario::All) {
            slow(&args, &servers).await?;
        }
        SetupResult::Ok(())
    }
    .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("resilience: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Instances on the server runtime, each answering after `base`, and a client over them.
fn fleet(
    servers: &ServerRuntime,
    count: usize,
    base: Duration,
    policy: Policy,
) -> SetupResult<(Vec<Backend>, LoadBalancer)> {
    let backends: Vec<Backend> = (0..count)
        .map(|_| Backend::start(&servers.handle()))
        .collect::<Result<_, _>>()?;
    for backend in &backends {
        backend.set_delay(base);
    }
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let balancer = LoadBalancer::builder()
        .supplier(StaticSupplier::new(feign_bench::client::SERVICE, &urls))
        .policy(policy)
        .slow_start(SlowStart::disabled())
        .build();
    Ok((backends, balancer))
}

/// Runs the open loop with `client`, calling `event` at `event_at` into the run.
async fn traffic(
    balancer: LoadBalancer,
    rate: u32,
    seconds: f64,
    event_at: Duration,
    event: impl FnOnce() + Send + 'static,
) -> SetupResult<Vec<OpenCall>> {
    let client = Arc::new(feign_balanced(balancer)?);
    let timer = tokio::spawn(async move {
        tokio::time::sleep(event_at).await;
        event();
    });
    let calls = open_loop(rate, Duration::from_secs_f64(seconds), move |id| {
        let client = client.clone();
        async move { client.get_order(id).await.is_ok_and(|order| order.id == id) }
    })
    .await;
    timer.await?;
    Ok(calls)
}

fn latencies<'a>(calls: impl IntoIterator<Item = &'a OpenCall>) -> Latencies {
    Latencies::new(calls.into_iter().map(|call| call.latency_us).collect())
}

/// Median of `metric` over runs, formatted as a latency.
fn median_us(runs: &[Latencies], metric: impl Fn(&Latencies) -> u32) -> String {
    format_us(median(runs.iter().map(|run| f64::from(metric(run)))))
}

async fn killed(args: &Args, servers: &ServerRuntime) -> SetupResult<()> {
    let base = Duration::from_millis(args.base_ms);
    let kill_at = Duration::from_secs_f64(args.kill_seconds / 3.0);
    let window = kill_at..kill_at + Duration::from_secs(1);
    eprintln!(
        "killed: 3 instances at {} ms, one killed at {:.1} s of a {} s run, {} calls/s open loop, {} runs",
        args.base_ms,
        kill_at.as_secs_f64(),
        args.kill_seconds,
        args.kill_rate,
        args.runs
    );
    let mut table = Table::new([
        "policy",
        "errors, all runs (worst run; calls)",
        "p50 after kill",
        "p99 after kill",
        "max after kill",
        "p99 same window, no kill",
        "extra p99",
        "p99 whole run",
    ])
    .text_columns(1);
    let mut chart = Vec::new();
    for (policy, name) in POLICIES {
        let (mut errors, mut sent) = (Vec::new(), Vec::new());
        let (mut after, mut quiet, mut whole) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..args.runs {
            for kill in [false, true] {
                let (backends, balancer) = fleet(servers, 3, base, policy)?;
                let backends = Arc::new(backends);
                let victim = backends.clone();
                let calls = traffic(
                    balancer,
                    args.kill_rate,
                    args.kill_seconds,
                    kill_at,
                    move || {
                        if kill {
                            victim[2].kill();
                        }
                    },
                )
                .await?;
                let in_window = latencies(calls.iter().filter(|c| window.contains(&c.due)));
                if kill {
                    let failed = calls.iter().filter(|call| !call.ok).count();
                    eprintln!(
                        "  {name:<12} run {} killed: {failed} errors of {}, p99 after kill {}, max {}",
                        run + 1,
                        calls.len(),
                        format_us(f64::from(in_window.p99_us())),
                        format_us(f64::from(in_window.max_us()))
                    );
                    errors.push(failed as f64);
                    sent.push(calls.len() as f64);
                    after.push(in_window);
                    whole.push(latencies(&calls));
                } else {
                    quiet.push(in_window);
                }
            }
        }
        let extra = median(
            after
                .iter()
                .zip(&quiet)
                .map(|(a, q)| f64::from(a.p99_us()) - f64::from(q.p99_us())),
        );
        table.row([
            name.to_owned(),
            // Summed, with the worst run: a median would hide errors in a minority of runs.
            format!(
                "{:.0} (worst {:.0}; of {:.0})",
                errors.iter().sum::<f64>(),
                errors.iter().copied().fold(0.0, f64::max),
                sent.iter().sum::<f64>()
            ),
            median_us(&after, Latencies::p50_us),
            median_us(&after, Latencies::p99_us),
            median_us(&after, Latencies::max_us),
            median_us(&quiet, Latencies::p99_us),
            format!(
                "{}{}",
                if extra < 0.0 { "−" } else { "+" },
                format_us(extra.abs())
            ),
            median_us(&whole, Latencies::p99_us),
        ]);
        chart.push((name.to_owned(), Latencies::merge(&after)));
    }
    println!(
        "Instance killed mid-traffic: 3 instances answering in {} ms, {} calls/s open loop for {} s, one killed at {:.1} s; \
         \"after kill\" = calls due in the following second; median of {} runs\n",
        args.base_ms,
        args.kill_rate,
        args.kill_seconds,
        kill_at.as_secs_f64(),
        args.runs
    );
    print!("{table}");
    println!();
    write_chart(
        args,
        "resilience-killed.svg",
        "Calls in the second after an instance is killed (3 instances, open loop)",
        &chart,
    )
}

async fn slow(args: &Args, servers: &ServerRuntime) -> SetupResult<()> {
    let base = Duration::from_millis(args.base_ms);
    let total = Duration::from_secs_f64(args.slow_seconds);
    let (slow_from, slow_until) = (total / 4, total * 3 / 4);
    eprintln!(
        "slow: {SLOW_INSTANCES} instances at {} ms, one {SLOWDOWN}x slower from {:.1} s to {:.1} s, {} calls/s, {} runs",
        args.base_ms,
        slow_from.as_secs_f64(),
        slow_until.as_secs_f64(),
        args.slow_rate,
        args.runs
    );
    let mut table = Table::new([
        "policy",
        "share sent to the slow one",
        "p50",
        "p99",
        "p99.9",
        "errors",
    ]);
    let mut chart = Vec::new();
    for (policy, name) in POLICIES {
        let (mut shares, mut runs, mut errors) = (Vec::new(), Vec::new(), 0);
        for run in 0..args.runs {
            let (backends, balancer) = fleet(servers, SLOW_INSTANCES, base, policy)?;
            let backends = Arc::new(backends);
            let fleet_view = backends.clone();
            let (tx, rx) = tokio::sync::oneshot::channel();
            let calls = traffic(balancer, args.slow_rate, args.slow_seconds, slow_from, {
                move || {
                    let hits = |b: &[Backend]| (b[0].hits(), b.iter().map(Backend::hits).sum());
                    let before: (u64, u64) = hits(&fleet_view);
                    fleet_view[0].set_delay(base * SLOWDOWN);
                    tokio::spawn(async move {
                        tokio::time::sleep(slow_until - slow_from).await;
                        let after: (u64, u64) = hits(&fleet_view);
                        fleet_view[0].set_delay(base);
                        let _ = tx.send((after.0 - before.0, after.1 - before.1));
                    });
                }
            })
            .await?;
            let (slow_hits, all_hits) = rx.await?;
            let share = slow_hits as f64 / (all_hits as f64).max(1.0);
            let failed = calls.iter().filter(|call| !call.ok).count();
            let lat = latencies(&calls);
            eprintln!(
                "  {name:<12} run {}: share {:.2} %, p99 {}, p99.9 {}, errors {failed}",
                run + 1,
                share * 100.0,
                format_us(f64::from(lat.p99_us())),
                format_us(f64::from(lat.quantile_us(0.999)))
            );
            shares.push(share * 100.0);
            errors += failed;
            runs.push(lat);
            drop(backends);
        }
        table.row([
            name.to_owned(),
            format!("{:.2} %", median(shares)),
            median_us(&runs, Latencies::p50_us),
            median_us(&runs, Latencies::p99_us),
            median_us(&runs, |l| l.quantile_us(0.999)),
            errors.to_string(),
        ]);
        chart.push((name.to_owned(), Latencies::merge(&runs)));
    }
    println!(
        "Slow backend: {SLOW_INSTANCES} instances answering in {} ms, one {SLOWDOWN}× slower for the middle half of a {} s run, \
         {} calls/s open loop; share counted while it is slow (fair share {:.1} %); median of {} runs\n",
        args.base_ms,
        args.slow_seconds,
        args.slow_rate,
        100.0 / SLOW_INSTANCES as f64,
        args.runs
    );
    print!("{table}");
    println!();
    write_chart(
        args,
        "resilience-slow.svg",
        "Latency per policy, one of 11 instances 20× slower (open loop)",
        &chart,
    )
}

fn write_chart(
    args: &Args,
    file: &str,
    title: &str,
    series: &[(String, Latencies)],
) -> SetupResult<()> {
    std::fs::create_dir_all(&args.out_dir)?;
    let path = args.out_dir.join(file);
    std::fs::write(&path, latency_percentiles(title, series))?;
    eprintln!("chart written to {}", path.display());
    Ok(())
}
