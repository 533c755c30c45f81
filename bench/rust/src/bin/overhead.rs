//! Framework overhead: the same in-process hyper server called by raw reqwest, a feign client
//! with a fixed URL, raw reqwest calling the three ports in turn (what the balanced variants
//! should be held against), feign + load balancer over a static list, and feign + load
//! balancer + Eureka discovery (embedded registry), at several concurrencies. Variants are interleaved
//! (the order rotates each run) and every figure is the median over the runs; the ratio to raw
//! reqwest is taken within each run, then its median reported.
//!
//! Run with `cargo run --release -p feign-bench --bin overhead -- --runs 5`.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use feign_bench::backend::{Backend, ServerRuntime};
use feign_bench::client::{OrderService, OrderServiceClient, RawClient};
use feign_bench::load::{closed_loop, Budget, ClosedRun};
use feign_bench::stats::{format_us, median};
use feign_bench::table::Table;
use feign_bench::topology::{
    feign_balanced, feign_fixed, static_balancer, Discovered, SetupResult,
};
use feign_lb::Policy;

/// Command-line settings.
#[derive(Debug, Parser)]
#[command(about = "Framework overhead against raw reqwest")]
struct Args {
    /// Repetitions; medians are reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Concurrencies to measure (closed loop: each caller calls again when its call returns).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 16, 64])]
    concurrency: Vec<usize>,
    /// Seconds each variant is measured for, per run and concurrency.
    #[arg(long, default_value_t = 1.5)]
    seconds: f64,
    /// Seconds of unmeasured calls before each measurement.
    #[arg(long, default_value_t = 0.3)]
    warmup: f64,
    /// Worker threads of the server's own runtime.
    #[arg(long, default_value_t = 2)]
    server_threads: usize,
}

/// One way of calling the server.
#[derive(Clone)]
enum Variant {
    Raw(RawClient),
    Feign(OrderServiceClient),
}

impl Variant {
    async fn call(&self, id: u64) -> bool {
        match self {
            Variant::Raw(raw) => raw.get_order(id).await.is_ok_and(|order| order.id == id),
            Variant::Feign(feign) => feign.get_order(id).await.is_ok_and(|order| order.id == id),
        }
    }
}

const NAMES: [&str; 5] = [
    "raw reqwest",
    "feign, fixed URL",
    "raw reqwest, 3 ports in turn",
    "feign + LB (static list)",
    "feign + LB + Eureka",
];

/// Goals from the issue: ratio to raw reqwest.
const GOALS: [Option<f64>; 5] = [None, Some(0.97), None, None, Some(0.95)];

async fn measure(variant: &Variant, concurrency: usize, seconds: f64) -> ClosedRun {
    let variant = variant.clone();
    closed_loop(
        concurrency,
        Budget::Time(Duration::from_secs_f64(seconds)),
        move |id| {
            let variant = variant.clone();
            async move { variant.call(id).await }
        },
    )
    .await
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("overhead: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &Args) -> SetupResult<()> {
    let servers = ServerRuntime::new(args.server_threads)?;
    let backends: Vec<Backend> = (0..3)
        .map(|_| Backend::start(&servers.handle()))
        .collect::<Result<_, _>>()?;
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let ports: Vec<u16> = backends.iter().map(Backend::port).collect();
    let discovered = Discovered::start(&ports).await?;
    let variants = [
        Variant::Raw(RawClient::new(&urls[0])?),
        Variant::Feign(feign_fixed(&urls[0])?),
        Variant::Raw(RawClient::rotating(urls.clone())?),
        Variant::Feign(feign_balanced(static_balancer(&urls, Policy::RoundRobin))?),
        Variant::Feign(feign_balanced(discovered.balancer(Policy::RoundRobin))?),
    ];
    eprintln!(
        "overhead: {} runs x {:?} concurrency x {} variants, {} s each; server on {} threads, {} backends",
        args.runs,
        args.concurrency,
        variants.len(),
        args.seconds,
        args.server_threads,
        backends.len()
    );

    // samples[concurrency][variant] = one ClosedRun per run.
    let mut samples: Vec<Vec<Vec<ClosedRun>>> =
        vec![vec![Vec::new(); variants.len()]; args.concurrency.len()];
    for run in 0..args.runs {
        for (c_index, &concurrency) in args.concurrency.iter().enumerate() {
            for offset in 0..variants.len() {
                let v_index = (run + offset) % variants.len();
                let variant = &variants[v_index];
                measure(variant, concurrency, args.warmup).await;
                let result = measure(variant, concurrency, args.seconds).await;
                eprintln!(
                    "  run {} c={concurrency:<3} {:<26} {:>9.0} req/s  p50 {:>9}  p99 {:>9}  errors {}",
                    run + 1,
                    NAMES[v_index],
                    result.rps(),
                    format_us(f64::from(result.latencies.p50_us())),
                    format_us(f64::from(result.latencies.p99_us())),
                    result.errors
                );
                samples[c_index][v_index].push(result);
            }
        }
    }
    discovered.shutdown().await;

    let mut table = Table::new([
        "concurrency",
        "client",
        "req/s",
        "p50",
        "p99",
        "ratio to raw",
        "goal",
        "errors",
    ])
    .text_columns(2);
    let mut missed = Vec::new();
    for (c_index, &concurrency) in args.concurrency.iter().enumerate() {
        let raw = &samples[c_index][0];
        for (v_index, runs) in samples[c_index].iter().enumerate() {
            let ratio = median(runs.iter().zip(raw).map(|(own, raw)| own.rps() / raw.rps()));
            let goal = GOALS[v_index];
            let verdict = match goal {
                Some(goal) if ratio >= goal => format!("≥ {goal} met"),
                Some(goal) => {
                    missed.push(format!("{} at concurrency {concurrency}", NAMES[v_index]));
                    format!("≥ {goal} MISSED")
                }
                None => "—".to_owned(),
            };
            table.row([
                concurrency.to_string(),
                NAMES[v_index].to_owned(),
                format!("{:.0}", median(runs.iter().map(ClosedRun::rps))),
                format_us(median(runs.iter().map(|r| f64::from(r.latencies.p50_us())))),
                format_us(median(runs.iter().map(|r| f64::from(r.latencies.p99_us())))),
                format!("{ratio:.3}"),
                verdict,
                runs.iter().map(|r| r.errors).sum::<u64>().to_string(),
            ]);
        }
    }
    println!(
        "Framework overhead: median of {} runs, {} s per variant and run, closed loop\n",
        args.runs, args.seconds
    );
    print!("{table}");
    if !missed.is_empty() {
        println!("\nmissed: {}", missed.join("; "));
    }
    Ok(())
}
