//! Cost per call, measured so that the machine's load cannot move it: instructions (valgrind),
//! CPU time and allocations of the client process alone, with the server in another process.
//!
//! `per-call` starts itself as a server process (three order servers and the embedded Eureka
//! registry where they are registered) pinned to one core, then runs every client variant as a
//! process of its own pinned to another core: each makes `--warmup` calls, then `--calls`
//! counted ones, on a current-thread tokio runtime, and prints what the counted calls cost.
//! Variants are interleaved (the order rotates each round; the valgrind pairs reverse it every
//! other repetition) and figures are medians over rounds; ratios are taken within a round or a
//! repetition (`feign_bench::figures::per_call`, which renders BENCHMARKS.md's tables from the
//! output). Instructions per call come from two runs of each client under
//! `valgrind --tool=cachegrind` that differ only in their counted calls, so start-up and warm-up
//! cancel out.
//!
//! Run with `cargo run --release -p feign-bench --bin per-call` (add `--features feignhttp` to
//! measure feignhttp too). Needs `taskset`; without `valgrind` the instruction table is
//! skipped, saying so.

use std::alloc::System;
use std::cell::Cell;
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::{Args as ClapArgs, Parser, Subcommand};
use cpu_time::ProcessTime;
use feign_bench::backend::{Backend, ServerRuntime};
use feign_bench::client::{OrderService, RawClient};
use feign_bench::figures::per_call::{
    allocations_of, cpu_of, instructions_of, Instructions, PerCall, Round,
};
use feign_bench::load::interleaved;
use feign_bench::peers::{BalancedReqwest, MiddlewareClient};
use feign_bench::per_call::{instructions_in, instructions_per_call, Sample, Variant};
use feign_bench::topology::{
    await_instances, discovered_balancer, discovery_client, feign_balanced, feign_fixed,
    static_balancer, Registered, SetupResult,
};
use feign_lb::Policy;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Command-line settings.
#[derive(Debug, Parser)]
#[command(about = "Instructions, CPU time and allocations per call, against raw reqwest")]
struct Args {
    #[command(subcommand)]
    role: Option<Role>,
    #[command(flatten)]
    run: RunArgs,
}

/// The processes `per-call` starts itself as.
#[derive(Debug, Subcommand)]
enum Role {
    /// The servers: prints `ready <url>,<url>,<url> <registry url>` and serves until its
    /// standard input closes (at most an hour).
    #[command(hide = true)]
    Serve,
    /// One client variant: prints one `sample ...` line.
    #[command(hide = true)]
    Client(ClientArgs),
}

/// What the orchestrating run measures.
#[derive(Debug, ClapArgs)]
struct RunArgs {
    /// Rounds of CPU-time runs (every variant at every concurrency once per round); medians
    /// are reported.
    #[arg(long, default_value_t = 9)]
    rounds: usize,
    /// Counted calls per CPU-time run.
    #[arg(long, default_value_t = 5_000)]
    calls: u64,
    /// Uncounted calls before the counted ones.
    #[arg(long, default_value_t = 500)]
    warmup: u64,
    /// Concurrencies (callers on the client's one thread).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 16, 64])]
    concurrency: Vec<usize>,
    /// Counted calls of the two valgrind runs whose difference gives instructions per call.
    #[arg(long, value_delimiter = ',', default_values_t = [200, 1_200])]
    valgrind_calls: Vec<u64>,
    /// Repetitions of each pair of valgrind runs; the median is reported.
    #[arg(long, default_value_t = 3)]
    valgrind_reps: usize,
    /// Core the client processes run on.
    #[arg(long, default_value_t = 0)]
    client_cpu: usize,
    /// Core the server process runs on.
    #[arg(long, default_value_t = 1)]
    server_cpu: usize,
    /// Only these variants (their keys, e.g. `raw3,lb,lb-middleware`); every one by default.
    #[arg(long, value_delimiter = ',')]
    variants: Vec<Variant>,
}

/// One client process's settings.
#[derive(Debug, Clone, ClapArgs)]
struct ClientArgs {
    /// Which client.
    #[arg(long)]
    variant: Variant,
    /// The three order servers' base URLs.
    #[arg(long, value_delimiter = ',')]
    urls: Vec<String>,
    /// The registry's base URL, for the Eureka variant.
    #[arg(long)]
    registry: String,
    /// Callers on the client's one thread.
    #[arg(long)]
    concurrency: usize,
    /// Uncounted calls first.
    #[arg(long)]
    warmup: u64,
    /// Counted calls.
    #[arg(long)]
    calls: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let outcome = match args.role {
        Some(Role::Serve) => serve(),
        Some(Role::Client(client_args)) => client(&client_args),
        None => run(&args.run),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("per-call: {err}");
            ExitCode::FAILURE
        }
    }
}

// ---- the server process ----

fn serve() -> SetupResult<()> {
    let servers = ServerRuntime::new(1)?;
    let backends: Vec<Backend> = (0..3)
        .map(|_| Backend::start(&servers.handle()))
        .collect::<Result<_, _>>()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let ports: Vec<u16> = backends.iter().map(Backend::port).collect();
        let registered = Registered::start(&ports).await?;
        let urls: Vec<String> = backends.iter().map(Backend::url).collect();
        println!("ready {} {}", urls.join(","), registered.url());
        std::io::stdout().flush()?;
        let stdin_closed = tokio::task::spawn_blocking(|| {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
        });
        let _ = tokio::time::timeout(Duration::from_secs(3_600), stdin_closed).await;
        registered.shutdown().await;
        Ok(())
    })
}

// ---- a client process ----

fn client(args: &ClientArgs) -> SetupResult<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let sample = runtime.block_on(measure_variant(args))?;
    println!("{sample}");
    Ok(())
}

async fn measure_variant(args: &ClientArgs) -> SetupResult<Sample> {
    let first = args.urls.first().ok_or("no server URL")?;
    Ok(match args.variant {
        Variant::Raw => {
            let raw = &RawClient::new(first)?;
            measure(args, |id| async move {
                raw.get_order(id).await.is_ok_and(|o| o.id == id)
            })
            .await
        }
        Variant::RawRotating => {
            let raw = &RawClient::rotating(args.urls.clone())?;
            measure(args, |id| async move {
                raw.get_order(id).await.is_ok_and(|o| o.id == id)
            })
            .await
        }
        Variant::FeignFixed => {
            let feign = &feign_fixed(first)?;
            measure(args, |id| async move {
                feign.get_order(id).await.is_ok_and(|o| o.id == id)
            })
            .await
        }
        Variant::FeignStatic => {
            let feign = &feign_balanced(static_balancer(&args.urls, Policy::RoundRobin))?;
            measure(args, |id| async move {
                feign.get_order(id).await.is_ok_and(|o| o.id == id)
            })
            .await
        }
        Variant::FeignEureka => {
            // A long fetch interval keeps registry fetches out of the counted calls.
            let discovery = discovery_client(&args.registry, Duration::from_secs(600)).await?;
            await_instances(&discovery, args.urls.len()).await?;
            let feign = &feign_balanced(discovered_balancer(&discovery, Policy::RoundRobin))?;
            let sample = measure(args, |id| async move {
                feign.get_order(id).await.is_ok_and(|o| o.id == id)
            })
            .await;
            discovery.shutdown().await;
            sample
        }
        Variant::Middleware => {
            let client = &MiddlewareClient::new(first)?;
            measure(args, |id| async move {
                client.get_order(id).await.is_ok_and(|o| o.id == id)
            })
            .await
        }
        Variant::LbMiddleware => {
            let client = &BalancedReqwest::new(static_balancer(&args.urls, Policy::RoundRobin))?;
            measure(args, |id| async move {
                client.get_order(id).await.is_ok_and(|o| o.id == id)
            })
            .await
        }
        Variant::Feignhttp => feignhttp_sample(args).await?,
    })
}

#[cfg(feature = "feignhttp")]
async fn feignhttp_sample(args: &ClientArgs) -> SetupResult<Sample> {
    use feign_bench::peers::feignhttp_client::feignhttp_orders;
    let first = args.urls.first().ok_or("no server URL")?;
    let port: u16 = first.rsplit(':').next().unwrap_or_default().parse()?;
    let client = &feignhttp_orders(port)?;
    Ok(measure(args, |id| async move {
        client.get_order(id).await.is_ok_and(|o| o.id == id)
    })
    .await)
}

#[cfg(not(feature = "feignhttp"))]
#[allow(clippy::unused_async)] // the same signature as the real one above
async fn feignhttp_sample(_: &ClientArgs) -> SetupResult<Sample> {
    Err("feignhttp is measured only in a build with `--features feignhttp`".into())
}

/// Warms up, then counts `args.calls` calls of `call`.
async fn measure<F, Fut>(args: &ClientArgs, call: F) -> Sample
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = bool>,
{
    drive(args.concurrency, args.warmup, &call).await;
    let region = Region::new(GLOBAL);
    let cpu = ProcessTime::now();
    let wall = Instant::now();
    let errors = drive(args.concurrency, args.calls, &call).await;
    let wall_ns = wall.elapsed().as_nanos();
    let cpu_ns = cpu.elapsed().as_nanos();
    let allocated = region.change();
    Sample {
        calls: args.calls,
        errors,
        cpu_ns: u64::try_from(cpu_ns).unwrap_or(u64::MAX),
        wall_ns: u64::try_from(wall_ns).unwrap_or(u64::MAX),
        allocations: (allocated.allocations + allocated.reallocations) as u64,
        allocated_bytes: allocated.bytes_allocated as u64,
    }
}

/// `calls` calls from `concurrency` callers polled together on this thread; returns how many
/// failed. Ids cycle through `0..1000`.
async fn drive<F, Fut>(concurrency: usize, calls: u64, call: &F) -> u64
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = bool>,
{
    let next = Cell::new(0_u64);
    let errors = Cell::new(0_u64);
    let caller = || async {
        loop {
            let id = next.get();
            if id >= calls {
                break;
            }
            next.set(id + 1);
            if !call(id % 1_000).await {
                errors.set(errors.get() + 1);
            }
        }
    };
    futures_util::future::join_all((0..concurrency.max(1)).map(|_| caller())).await;
    errors.get()
}

// ---- the orchestrating run ----

/// The server process; closing its standard input stops it.
struct ServerProcess {
    child: Child,
    urls: String,
    registry: String,
}

impl ServerProcess {
    fn start(cpu: usize) -> SetupResult<ServerProcess> {
        let mut child = Command::new("taskset")
            .arg("-c")
            .arg(cpu.to_string())
            .arg(std::env::current_exe()?)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|err| format!("could not start `taskset` (util-linux): {err}"))?;
        let stdout = child.stdout.take().ok_or("no server stdout")?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let mut words = line.split_whitespace();
        let (Some("ready"), Some(urls), Some(registry)) =
            (words.next(), words.next(), words.next())
        else {
            let _ = child.kill();
            return Err(format!("the server process did not start: {line:?}").into());
        };
        Ok(ServerProcess {
            urls: urls.to_owned(),
            registry: registry.to_owned(),
            child,
        })
    }

    /// The arguments of a client process calling this server.
    fn client_args(
        &self,
        variant: Variant,
        concurrency: usize,
        warmup: u64,
        calls: u64,
    ) -> Vec<String> {
        vec![
            "client".into(),
            format!("--variant={variant}"),
            format!("--urls={}", self.urls),
            format!("--registry={}", self.registry),
            format!("--concurrency={concurrency}"),
            format!("--warmup={warmup}"),
            format!("--calls={calls}"),
        ]
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `program args` on `cpu` and returns its standard output and error, or why it failed.
fn run_pinned(cpu: usize, program: &str, args: &[String]) -> SetupResult<(String, String)> {
    let output = Command::new("taskset")
        .arg("-c")
        .arg(cpu.to_string())
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(format!("`{program} {}` failed: {stderr}", args.join(" ")).into());
    }
    Ok((stdout, stderr))
}

fn sample_in(stdout: &str) -> SetupResult<Sample> {
    let line = stdout
        .lines()
        .find(|line| line.starts_with("sample "))
        .ok_or_else(|| format!("no sample line in {stdout:?}"))?;
    Ok(line.parse()?)
}

fn run(args: &RunArgs) -> SetupResult<()> {
    let exe = std::env::current_exe()?.to_string_lossy().into_owned();
    let variants: Vec<Variant> = Variant::ALL
        .into_iter()
        .filter(|&variant| variant != Variant::Feignhttp || cfg!(feature = "feignhttp"))
        .filter(|variant| args.variants.is_empty() || args.variants.contains(variant))
        .collect();
    if !cfg!(feature = "feignhttp") {
        eprintln!("per-call: feignhttp NOT measured: build with `--features feignhttp` to add it");
    }
    let server = ServerProcess::start(args.server_cpu)?;
    eprintln!(
        "per-call: servers {} and registry {} on core {}; clients on core {}",
        server.urls, server.registry, args.server_cpu, args.client_cpu
    );
    let mut lines = PerCall::default();

    for round in 0..args.rounds {
        for &concurrency in &args.concurrency {
            for offset in 0..variants.len() {
                let variant = variants[(round + offset) % variants.len()];
                let client_args = server.client_args(variant, concurrency, args.warmup, args.calls);
                let sample = sample_in(&run_pinned(args.client_cpu, &exe, &client_args)?.0)?;
                let line = Round {
                    round: round + 1,
                    concurrency,
                    variant,
                    sample,
                };
                eprintln!("{line}");
                lines.rounds.push(line);
            }
        }
    }

    let valgrind = Command::new("valgrind").arg("--version").output().is_ok();
    let counts = match args.valgrind_calls[..] {
        [short, long] if short < long => Some((short, long)),
        _ => return Err("--valgrind-calls takes two counts, the smaller first".into()),
    };
    if valgrind {
        let (short, long) = counts.unwrap_or_default();
        for rep in 0..args.valgrind_reps {
            for &concurrency in &args.concurrency {
                for variant in interleaved(&variants, rep) {
                    let mut instructions = [0_u64; 2];
                    for (slot, calls) in [short, long].into_iter().enumerate() {
                        let mut valgrind_args = vec![
                            "--tool=cachegrind".to_owned(),
                            "--cache-sim=no".to_owned(),
                            "--branch-sim=no".to_owned(),
                            "--cachegrind-out-file=/dev/null".to_owned(),
                            exe.clone(),
                        ];
                        valgrind_args.extend(server.client_args(
                            variant,
                            concurrency,
                            args.warmup,
                            calls,
                        ));
                        let (stdout, stderr) =
                            run_pinned(args.client_cpu, "valgrind", &valgrind_args)?;
                        let sample = sample_in(&stdout)?;
                        if sample.errors > 0 {
                            return Err(format!(
                                "{variant} had {} errors under valgrind",
                                sample.errors
                            )
                            .into());
                        }
                        instructions[slot] = instructions_in(&stderr)
                            .ok_or_else(|| format!("no `I refs` in valgrind's output: {stderr}"))?;
                    }
                    let (short, long) = ((short, instructions[0]), (long, instructions[1]));
                    let per_call = instructions_per_call(short, long)
                        .ok_or("the longer valgrind run counted fewer instructions")?;
                    let line = Instructions {
                        rep: rep + 1,
                        concurrency,
                        variant,
                        short,
                        long,
                        per_call,
                    };
                    eprintln!("{line}");
                    lines.instructions.push(line);
                }
            }
        }
    } else {
        eprintln!("per-call: instructions NOT counted: `valgrind` was not found");
    }
    drop(server);
    if !lines.instructions.is_empty() {
        println!("Instructions per call\n\n{}", instructions_of(&lines));
    }
    println!(
        "CPU time per call and calls per second\n\n{}",
        cpu_of(&lines)
    );
    println!("Allocations per call\n\n{}", allocations_of(&lines));
    Ok(())
}
