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
//! Every run takes each scenario and, within it, each client in turn, the order of the clients
//! reversing every other run; each prints one line. The tables (`feign_bench::figures::hedging`)
//! report per variant the median over the runs of p50, p99, p99.9 and max, the ratios taken
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
use feign_bench::figures::hedging::{summary, Measured as Line};
use feign_bench::load::{interleaved, open_loop, OpenCall};
use feign_bench::stats::Latencies;
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
    /// Hedges the hedge budget refused.
    refused: u64,
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
    println!(
        "{} instances answering in {} ms, one of them {} ms later on one call in N of its own; \
         round robin, slow start off; {} calls/s open loop, {} calls per variant and run \
         (after a warm-up); {} runs",
        args.instances, args.base_ms, args.slow_ms, args.rate, args.calls, args.runs
    );
    let mut lines = Vec::new();
    for run in 0..args.runs {
        for &one_in in &args.slow_one_in {
            for variant in interleaved(&variants, run) {
                let measured = measure(args, &servers, one_in, variant).await?;
                let l = &measured.latencies;
                let line = Line {
                    run: run + 1,
                    one_in,
                    delay_us: match variant {
                        Variant::NoHedging => None,
                        Variant::After(delay) => Some(delay.as_micros() as f64),
                    },
                    p50_us: f64::from(l.p50_us()),
                    p99_us: f64::from(l.p99_us()),
                    p999_us: f64::from(l.quantile_us(0.999)),
                    max_us: f64::from(l.max_us()),
                    picks_per_call: measured.picks_per_call,
                    hedges: measured.hedges,
                    extra: measured.extra_arrivals,
                    refused: measured.refused,
                    errors: measured.errors as u64,
                    calls: Some(l.len() as u64),
                };
                println!("{line}");
                lines.push(line);
            }
        }
    }
    println!("\n{}", summary(&lines, Some(args.instances as u64)));
    Ok(())
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
