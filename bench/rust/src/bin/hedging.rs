//! Hedged requests against a slow tail: five instances on 127.0.0.1 behind a round-robin
//! balancer and a `#[feign_client]`; four answer at once, one answers a share of its calls
//! (one in N, deterministic) after 100 ms. An open loop sends a fixed number of calls at a fixed
//! rate, the same offered load for every variant, through a client without hedging and through
//! clients hedging after each delay asked for. Each call's latency counts from when it started:
//! Tokio's timer ticks every millisecond, so a call due every 500 µs may leave up to a
//! millisecond late, which would swamp sub-millisecond latencies. (A closed loop would not do
//! either: callers stuck on 100 ms calls leave the others alone on the machine, so the load, and
//! with it the median, would differ between the variants.)
//!
//! Reports per variant the median over the runs of p50, p99, p99.9 and max, the ratios taken
//! within each run (p99 over that run's median; p99 against the same run's p99 without
//! hedging), and the load it cost: the balancer's picks per call, the picks beyond one per call
//! (hedges; one dropped before its request reached a server counts too), the requests the
//! servers received beyond one per call, and the hedges the hedge budget refused.
//!
//! Run with `cargo run --release -p feign-bench --bin hedging`; `--help` for the knobs.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use feign_bench::backend::{Backend, ServerRuntime};
use feign_bench::client::{OrderService as _, OrderServiceClient, SERVICE};
use feign_bench::load::{open_loop, OpenCall};
use feign_bench::stats::{format_us, median, Latencies};
use feign_bench::table::Table;
use feign_bench::topology::SetupResult;
use feign_core::HedgingConfig;
use feign_lb::{Counters, LoadBalancer, Policy, SlowStart, StaticSupplier};

/// Command-line settings.
#[derive(Debug, Parser)]
#[command(about = "Tail latency and extra load with and without hedged requests")]
struct Args {
    /// Repetitions; medians are reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Calls measured per variant and run.
    #[arg(long, default_value_t = 20_000)]
    calls: u32,
    /// Calls started per second (open loop).
    #[arg(long, default_value_t = 2_000)]
    rate: u32,
    /// Instances behind the balancer; the first is the slow one.
    #[arg(long, default_value_t = 5)]
    instances: usize,
    /// Service time of every call, in milliseconds (0: answer at once).
    #[arg(long, default_value_t = 0)]
    base_ms: u64,
    /// What a slow call waits more, in milliseconds.
    #[arg(long, default_value_t = 100)]
    slow_ms: u64,
    /// The scenarios: the slow instance delays one of every N of its calls, per value.
    #[arg(long, value_delimiter = ',', default_values_t = [10, 50])]
    slow_one_in: Vec<u64>,
    /// The fixed hedge delays to compare, in microseconds.
    #[arg(long, value_delimiter = ',', default_values_t = [10_000, 1_000])]
    delays_us: Vec<u64>,
}

/// How a client hedges.
#[derive(Debug, Clone, Copy)]
enum Variant {
    NoHedging,
    After(Duration),
}

impl Variant {
    fn label(self) -> String {
        match self {
            Variant::NoHedging => "no hedging".to_owned(),
            Variant::After(delay) => format!("hedge after {}", format_us(delay.as_micros() as f64)),
        }
    }

    fn hedging(self) -> Option<HedgingConfig> {
        match self {
            Variant::NoHedging => None,
            Variant::After(delay) => Some(HedgingConfig::after(delay)),
        }
    }
}

/// What one variant's run measured.
#[derive(Debug)]
struct Measured {
    latencies: Latencies,
    errors: usize,
    /// Balancer picks beyond one per call that were not retries: hedges.
    hedges: u64,
    /// Balancer picks per call.
    picks_per_call: f64,
    /// Requests the servers received beyond one per call.
    extra_arrivals: u64,
    /// Hedges the retry budget refused.
    refused: u64,
}

impl Measured {
    fn per_call(&self, count: u64) -> f64 {
        count as f64 / self.latencies.len().max(1) as f64
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hedging: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &Args) -> SetupResult<()> {
    let servers = ServerRuntime::new(1)?;
    let mut variants = vec![Variant::NoHedging];
    variants.extend(
        args.delays_us
            .iter()
            .map(|&us| Variant::After(Duration::from_micros(us))),
    );
    // results[scenario][variant][run]
    let mut results: Vec<Vec<Vec<Measured>>> = args
        .slow_one_in
        .iter()
        .map(|_| variants.iter().map(|_| Vec::new()).collect())
        .collect();
    for run in 0..args.runs {
        for (scenario, &one_in) in args.slow_one_in.iter().enumerate() {
            for (index, &variant) in variants.iter().enumerate() {
                let measured = measure(args, &servers, one_in, variant).await?;
                println!(
                    "run {} slow 1 in {one_in}, {}: p50 {}, p99 {}, p99.9 {}, max {}, picks/call {:.4}, hedges {}, extra at servers {}, refused by the budget {}, errors {}",
                    run + 1,
                    variant.label(),
                    format_us(f64::from(measured.latencies.p50_us())),
                    format_us(f64::from(measured.latencies.p99_us())),
                    format_us(f64::from(measured.latencies.quantile_us(0.999))),
                    format_us(f64::from(measured.latencies.max_us())),
                    measured.picks_per_call,
                    measured.hedges,
                    measured.extra_arrivals,
                    measured.refused,
                    measured.errors,
                );
                results[scenario][index].push(measured);
            }
        }
    }
    println!(
        "\n{} instances answering in {} ms, one of them {} ms later on one call in N of its own; \
         round robin, slow start off; {} calls/s open loop, {} calls per variant and run \
         (after a warm-up); median of {} runs\n",
        args.instances, args.base_ms, args.slow_ms, args.rate, args.calls, args.runs
    );
    for (scenario, &one_in) in args.slow_one_in.iter().enumerate() {
        println!(
            "Slow instance delays 1 call in {one_in} of its own ({:.1} % of all calls)\n",
            100.0 / (one_in.max(1) as f64 * args.instances as f64)
        );
        println!("{}", table(&variants, &results[scenario]));
    }
    Ok(())
}

/// The table of one scenario: a row per variant, each figure the median over the runs.
fn table(variants: &[Variant], runs: &[Vec<Measured>]) -> Table {
    let mut table = Table::new([
        "client",
        "p50",
        "p99",
        "p99.9",
        "max",
        "p99 / p50",
        "p99 / p99 without hedging",
        "balancer picks per call",
        "hedges (picks beyond one per call)",
        "extra requests at the servers",
        "hedges refused by the hedge budget",
        "errors (all runs)",
    ]);
    let unhedged = &runs[0];
    for (variant, measured) in variants.iter().zip(runs) {
        let latency = |metric: fn(&Latencies) -> u32| {
            format_us(median(
                measured.iter().map(|m| f64::from(metric(&m.latencies))),
            ))
        };
        let ratio = median(
            measured
                .iter()
                .map(|m| f64::from(m.latencies.p99_us()) / f64::from(m.latencies.p50_us().max(1))),
        );
        let against = median(measured.iter().zip(unhedged).map(|(m, u)| {
            f64::from(m.latencies.p99_us()) / f64::from(u.latencies.p99_us().max(1))
        }));
        let share = |count: fn(&Measured) -> u64| {
            format!(
                "{:.2} %",
                100.0 * median(measured.iter().map(|m| m.per_call(count(m))))
            )
        };
        table.row([
            variant.label(),
            latency(Latencies::p50_us),
            latency(Latencies::p99_us),
            latency(|l| l.quantile_us(0.999)),
            latency(Latencies::max_us),
            format!("{ratio:.1}"),
            format!("{against:.2}"),
            format!("{:.4}", median(measured.iter().map(|m| m.picks_per_call))),
            share(|m| m.hedges),
            share(|m| m.extra_arrivals),
            share(|m| m.refused),
            measured.iter().map(|m| m.errors).sum::<usize>().to_string(),
        ]);
    }
    table
}

/// Fresh instances and a fresh client; a warm-up, then `args.calls` calls measured.
async fn measure(
    args: &Args,
    servers: &ServerRuntime,
    one_in: u64,
    variant: Variant,
) -> SetupResult<Measured> {
    let backends: Vec<Backend> = (0..args.instances.max(1))
        .map(|_| Backend::start(&servers.handle()))
        .collect::<Result<_, _>>()?;
    for backend in &backends {
        backend.set_delay(Duration::from_millis(args.base_ms));
    }
    backends[0].set_slow_share(Duration::from_millis(args.slow_ms), one_in);
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let balancer = LoadBalancer::builder()
        .supplier(StaticSupplier::new(SERVICE, &urls))
        .policy(Policy::RoundRobin)
        .slow_start(SlowStart::disabled())
        .build();
    let mut builder = OrderServiceClient::builder().load_balancer(balancer.clone());
    if let Some(hedging) = variant.hedging() {
        builder = builder.hedging(hedging);
    }
    let client = Arc::new(builder.build()?);
    // Connections opened and the budget's window started before anything counts.
    calls(&client, args.rate, WARM_UP).await;
    let arrivals = |b: &[Backend]| b.iter().map(Backend::arrivals).sum::<u64>();
    let (arrivals_before, counters_before) = (arrivals(&backends), counters(&balancer)?);
    let measured = calls(&client, args.rate, args.calls).await;
    // Let the servers see the last cancelled attempts before they are counted.
    tokio::time::sleep(Duration::from_millis(args.slow_ms + 50)).await;
    let (arrivals_after, counters_after) = (arrivals(&backends), counters(&balancer)?);
    let picks = |c: &Counters| c.success + c.failed + c.discard;
    let made = measured.len() as u64;
    let picked = picks(&counters_after) - picks(&counters_before);
    let retries = counters_after.retries - counters_before.retries;
    Ok(Measured {
        errors: measured.iter().filter(|call| !call.ok).count(),
        latencies: Latencies::new(measured.iter().map(|call| call.own_us).collect()),
        hedges: picked.saturating_sub(made + retries),
        picks_per_call: picked as f64 / made.max(1) as f64,
        extra_arrivals: (arrivals_after - arrivals_before).saturating_sub(made),
        refused: counters_after.hedges_refused - counters_before.hedges_refused,
    })
}

fn counters(balancer: &LoadBalancer) -> SetupResult<Counters> {
    balancer
        .counters(SERVICE)
        .ok_or_else(|| "the balancer does not know the service".into())
}

/// Calls made before each measurement, to open the connections.
const WARM_UP: u32 = 500;

/// `calls` calls at `rate` a second, each checked to be the order asked for.
async fn calls(client: &Arc<OrderServiceClient>, rate: u32, calls: u32) -> Vec<OpenCall> {
    let client = client.clone();
    let seconds = f64::from(calls) / f64::from(rate.max(1));
    open_loop(rate, Duration::from_secs_f64(seconds), move |id| {
        let client = client.clone();
        async move { client.get_order(id).await.is_ok_and(|order| order.id == id) }
    })
    .await
}
