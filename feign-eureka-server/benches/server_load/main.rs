//! Load on a Eureka registry, the embedded one against the real Spring Cloud Netflix Eureka
//! server, in one run: 10,000 registered instances, then renewals and full fetches at fixed rates
//! together, with latency percentiles and each server's resident memory.
//!
//! ```sh
//! tests/interop/build.sh   # once: builds the Spring server's jar (Java 17 and Maven)
//! cargo bench -p feign-eureka-server --bench server_load
//! ```
//!
//! Each registry runs in a process of its own, bound to 127.0.0.1: the embedded one in a child of
//! this binary, the Spring one (`tests/interop/eureka-server`) through
//! `feign_tests::interop::JavaApp`, with the JVM's default flags (no heap size, default
//! collector, both JIT tiers) unless `FEIGN_BENCH_JVM_OPTS` gives others. Both are configured
//! as the interop fixture is: no self-preservation, eviction every second, no read-only response
//! cache; the embedded one also without its per-client registration limit, which Spring lacks.
//! Memory is each server's `VmRSS` and `VmHWM` (peak) from `/proc/<pid>/status`; its CPU time
//! (user + system, `/proc/<pid>/stat`) while registering and during the measured load is the
//! steadier figure on a shared machine.
//!
//! Each run, per registry: start it, register the instances (32 concurrent callers, timed, the
//! JVM cold), run the renewals and fetches for 30 s unmeasured to warm the JVM up (its JIT
//! compiles the hot paths meanwhile), run them again measured, stop it. Runs alternate which registry goes first; the summary gives medians over
//! runs. Calls are issued open-loop on a fixed schedule and latency runs from when a call was
//! due, so a slow server cannot hide its queueing delay.
//!
//! Without Java or the jar the Spring server is not measured: the bench says so loudly and exits
//! with status 2 after the embedded results. Knobs (environment): `FEIGN_BENCH_INSTANCES`
//! (10000), `FEIGN_BENCH_RENEWALS` per second (1000), `FEIGN_BENCH_FETCHES` per second (200),
//! `FEIGN_BENCH_SECS` (10, at most 60), `FEIGN_BENCH_WARMUP_SECS` (30, at most 120),
//! `FEIGN_BENCH_RUNS` (3, at most 9), `FEIGN_BENCH_JVM_OPTS` (space-separated JVM flags for the
//! Spring server, e.g. `-Xmx256m`).
//!
//! `FEIGN_BENCH_DASHBOARD=1` measures something else, on the embedded registry alone: its
//! renewal latency with and without two clients reloading the dashboard (`dashboard.rs`).

mod dashboard;
mod load;
mod report;
mod servers;

use std::process::ExitCode;
use std::time::Duration;

use feign_bench::cpu::cpu_time_of;
use feign_bench::memory::resident_of;
use load::Plan;
use report::Measured;
use servers::{Kind, Registry};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> ExitCode {
    if servers::serve_if_child() {
        return ExitCode::SUCCESS;
    }
    let plan = Plan {
        instances: env("FEIGN_BENCH_INSTANCES", 10_000).max(1),
        renewals: env("FEIGN_BENCH_RENEWALS", 1_000).clamp(1, 100_000) as u32,
        fetches: env("FEIGN_BENCH_FETCHES", 200).clamp(1, 100_000) as u32,
        duration: Duration::from_secs(env("FEIGN_BENCH_SECS", 10).clamp(1, 60)),
    };
    let warm_up = Duration::from_secs(env("FEIGN_BENCH_WARMUP_SECS", 30).min(120));
    let runs = env("FEIGN_BENCH_RUNS", 3).clamp(1, 9) as usize;
    let jvm = std::env::var("FEIGN_BENCH_JVM_OPTS").unwrap_or_default();
    let jvm: Vec<&str> = jvm.split_whitespace().collect();
    println!(
        "{} instances, {} renewals/s and {} full fetches/s for {:?} after {:?} unmeasured, {runs} run(s); Spring JVM flags: {}; load average {}",
        plan.instances,
        plan.renewals,
        plan.fetches,
        plan.duration,
        warm_up,
        if jvm.is_empty() { "defaults".to_owned() } else { jvm.join(" ") },
        report::load_average(),
    );

    // The load generator's runtime; the servers have their own processes.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("load")
        .enable_all()
        .build()
        .expect("load runtime");
    if std::env::var_os("FEIGN_BENCH_DASHBOARD").is_some_and(|v| v == "1") {
        dashboard::run(&runtime, plan, warm_up, runs);
        return ExitCode::SUCCESS;
    }
    let mut measured: Vec<Measured> = Vec::new();
    let mut missing = None;
    for run in 0..runs {
        let order = if run % 2 == 0 {
            [Kind::Embedded, Kind::Spring]
        } else {
            [Kind::Spring, Kind::Embedded]
        };
        for kind in order {
            if missing.is_some() && kind == Kind::Spring {
                continue;
            }
            match Registry::start(kind, &jvm) {
                Ok(registry) => {
                    let m = measure(&runtime, kind, registry, plan, warm_up);
                    println!("run {}/{runs}: {}", run + 1, m.line());
                    measured.push(m);
                }
                Err(why) => missing = Some(format!("{}: {why}", kind.name())),
            }
        }
    }
    println!("load average {}", report::load_average());
    report::summary(&measured, plan);
    match missing {
        None => ExitCode::SUCCESS,
        Some(why) => {
            eprintln!("\n!!! NOT COMPARED: {why}. Build the jar with tests/interop/build.sh (Java 17, Maven) and run again.");
            ExitCode::from(2)
        }
    }
}

/// Registers, warms up, measures and stops one registry.
fn measure(
    runtime: &tokio::runtime::Runtime,
    kind: Kind,
    registry: Registry,
    plan: Plan,
    warm_up: Duration,
) -> Measured {
    let (url, pid) = (registry.url(), registry.pid());
    let client = load::client();
    let started = resident_of(pid);
    let cpu_started = cpu_time_of(pid);
    let (registration, registration_errors) = runtime.block_on(load::register(&client, &url, plan));
    let cpu_registered = cpu_time_of(pid);
    let registered = resident_of(pid);
    let full_bytes = runtime.block_on(load::full_fetch_size(&client, &url));
    if !warm_up.is_zero() {
        let warm_up = Plan {
            duration: warm_up,
            ..plan
        };
        load::mixed(runtime.handle(), &client, &url, warm_up);
    }
    let cpu_warm = cpu_time_of(pid);
    let mixed = load::mixed(runtime.handle(), &client, &url, plan);
    let cpu_loaded = cpu_time_of(pid);
    let loaded = resident_of(pid);
    let spent = |from: Option<Duration>, to: Option<Duration>| Some(to?.saturating_sub(from?));
    registry.stop();
    Measured {
        kind,
        registration,
        registration_errors,
        full_bytes,
        mixed,
        started,
        registered,
        loaded,
        registration_cpu: spent(cpu_started, cpu_registered),
        load_cpu: spent(cpu_warm, cpu_loaded),
        secs: plan.duration.as_secs_f64(),
    }
}
