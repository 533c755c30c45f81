//! Resilience under open-loop traffic, per balancing policy (calls leave on a fixed schedule
//! and latency counts from the scheduled time, so a stalled call cannot hide the next ones):
//!
//! - `killed`: three instances; one is killed a third into the run (its listener and every
//!   open connection close at once, as when the process dies, without deregistering). Reports
//!   the errors callers saw and the latency of the calls due in the second after the kill,
//!   next to the same second of a run without the kill.
//! - `slow`: the slow-backend case of feign-lb's scenario runner (`feign-lb/benches/slow_backend.rs`)
//!   with the same shape (11 instances at 5 ms, one 20× slower for the middle half).
//!
//! Every run takes each policy in turn, the order reversing every other run (and, in `killed`,
//! the run with the kill and the one without in the same way). Each run prints one line per
//! policy; then, per scenario and policy, the latency of all runs' calls at the percentiles its
//! chart plots, and the tables (`feign_bench::figures::resilience`, which renders the tables and
//! the charts of BENCHMARKS.md from this output). Run with
//! `cargo run --release -p feign-bench --bin lb-resilience -- --runs 5`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use feign_bench::backend::{Backend, ServerRuntime};
use feign_bench::chart::quantile_grid;
use feign_bench::client::OrderService;
use feign_bench::figures::resilience::{
    killed_of, slow_of, Killed, Quantiles, Slow, SLOW_INSTANCES,
};
use feign_bench::load::{interleaved, open_loop, OpenCall};
use feign_bench::stats::Latencies;
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
}

const POLICIES: [(Policy, &str); 4] = [
    (Policy::RoundRobin, "RoundRobin"),
    (Policy::Random, "Random"),
    (Policy::LeastRequest, "LeastRequest"),
    (Policy::PeakEwma, "PeakEwma"),
];

/// The slow instance is this many times slower.
const SLOWDOWN: u32 = 20;

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

fn us(latency_us: u32) -> f64 {
    f64::from(latency_us)
}

/// Prints the latency of every run's calls of `scenario` under each policy, for its chart.
fn print_quantiles(scenario: &str, per_policy: Vec<(&str, Vec<Latencies>)>) {
    for (policy, runs) in per_policy {
        let line = Quantiles {
            scenario: scenario.to_owned(),
            policy: policy.to_owned(),
            us: quantile_grid(&Latencies::merge(&runs)),
        };
        println!("{line}");
    }
}

async fn killed(args: &Args, servers: &ServerRuntime) -> SetupResult<()> {
    let base = Duration::from_millis(args.base_ms);
    let kill_at = Duration::from_secs_f64(args.kill_seconds / 3.0);
    let window = kill_at..kill_at + Duration::from_secs(1);
    println!(
        "killed: 3 instances at {} ms, one killed at {:.1} s of a {} s run, {} calls/s open loop, {} runs",
        args.base_ms,
        kill_at.as_secs_f64(),
        args.kill_seconds,
        args.kill_rate,
        args.runs
    );
    let mut lines = Vec::new();
    let mut merged: Vec<(&str, Vec<Latencies>)> = POLICIES
        .iter()
        .map(|(_, name)| (*name, Vec::new()))
        .collect();
    for run in 0..args.runs {
        for (policy, name) in interleaved(&POLICIES, run) {
            let (mut quiet, mut with_kill) = (None, None);
            for kill in interleaved(&[false, true], run) {
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
                    with_kill = Some((calls, in_window));
                } else {
                    quiet = Some(in_window);
                }
            }
            let (Some(quiet), Some((calls, after))) = (quiet, with_kill) else {
                continue;
            };
            let line = Killed {
                run: run + 1,
                policy: name.to_owned(),
                calls: calls.len() as u64,
                errors: calls.iter().filter(|call| !call.ok).count() as u64,
                p50_after_us: Some(us(after.p50_us())),
                p99_after_us: us(after.p99_us()),
                max_after_us: us(after.max_us()),
                p99_quiet_us: Some(us(quiet.p99_us())),
                p99_whole_us: Some(us(latencies(&calls).p99_us())),
            };
            println!("{line}");
            lines.push(line);
            if let Some((_, runs)) = merged.iter_mut().find(|(policy, _)| *policy == name) {
                runs.push(after);
            }
        }
    }
    print_quantiles("killed", merged);
    println!(
        "\nInstance killed mid-traffic; \"after kill\" = calls due in the following second\n\n{}",
        killed_of(&lines)
    );
    Ok(())
}

async fn slow(args: &Args, servers: &ServerRuntime) -> SetupResult<()> {
    let base = Duration::from_millis(args.base_ms);
    let total = Duration::from_secs_f64(args.slow_seconds);
    let (slow_from, slow_until) = (total / 4, total * 3 / 4);
    println!(
        "slow: {SLOW_INSTANCES} instances at {} ms, one {SLOWDOWN}x slower from {:.1} s to {:.1} s, {} calls/s, {} runs",
        args.base_ms,
        slow_from.as_secs_f64(),
        slow_until.as_secs_f64(),
        args.slow_rate,
        args.runs
    );
    let mut lines = Vec::new();
    let mut merged: Vec<(&str, Vec<Latencies>)> = POLICIES
        .iter()
        .map(|(_, name)| (*name, Vec::new()))
        .collect();
    for run in 0..args.runs {
        for (policy, name) in interleaved(&POLICIES, run) {
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
            let lat = latencies(&calls);
            let line = Slow {
                run: run + 1,
                policy: name.to_owned(),
                share_percent: 100.0 * slow_hits as f64 / (all_hits as f64).max(1.0),
                errors: calls.iter().filter(|call| !call.ok).count() as u64,
                p50_us: Some(us(lat.p50_us())),
                p99_us: us(lat.p99_us()),
                p999_us: us(lat.quantile_us(0.999)),
            };
            println!("{line}");
            lines.push(line);
            if let Some((_, runs)) = merged.iter_mut().find(|(policy, _)| *policy == name) {
                runs.push(lat);
            }
            drop(backends);
        }
    }
    print_quantiles("slow", merged);
    println!(
        "\nSlow backend: one instance {SLOWDOWN}× slower for the middle half of the run\n\n{}",
        slow_of(&lines)
    );
    Ok(())
}
