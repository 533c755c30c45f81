//! Framework overhead: the same in-process hyper server called by raw reqwest, a feign client
//! with a fixed URL, raw reqwest calling the three ports in turn (what the balanced variants
//! should be held against), feign + load balancer over a static list, and feign + load
//! balancer + Eureka discovery (embedded registry), at several concurrencies. Variants are interleaved
//! (the order rotates each run) and every figure is the median over the runs; the ratio to raw
//! reqwest on the same ports is taken within each run, then its median (min–max) reported
//! (`feign_bench::figures::overhead`, which also renders BENCHMARKS.md's table from the output).
//!
//! Run with `cargo run --release -p feign-bench --bin overhead -- --runs 5`.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use feign_bench::backend::{Backend, ServerRuntime};
use feign_bench::client::{OrderService, OrderServiceClient, RawClient};
use feign_bench::figures::overhead::{summary, Measured};
use feign_bench::load::{closed_loop, Budget, ClosedRun};
use feign_bench::per_call::Variant as Name;
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

/// What each of the clients built in `run` is, in the same order.
const NAMES: [Name; 5] = [
    Name::Raw,
    Name::FeignFixed,
    Name::RawRotating,
    Name::FeignStatic,
    Name::FeignEureka,
];

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

    let mut lines = Vec::new();
    for run in 0..args.runs {
        for &concurrency in &args.concurrency {
            for offset in 0..variants.len() {
                let v_index = (run + offset) % variants.len();
                let variant = &variants[v_index];
                measure(variant, concurrency, args.warmup).await;
                let result = measure(variant, concurrency, args.seconds).await;
                let line = Measured {
                    run: run + 1,
                    concurrency,
                    variant: NAMES[v_index],
                    rps: result.rps(),
                    p50_us: f64::from(result.latencies.p50_us()),
                    p99_us: f64::from(result.latencies.p99_us()),
                    errors: result.errors,
                };
                eprintln!("{line}");
                lines.push(line);
            }
        }
    }
    discovered.shutdown().await;
    println!(
        "Framework overhead, {} s per client and run, closed loop\n\n{}",
        args.seconds,
        summary(&lines)
    );
    Ok(())
}
