//! Scenario runner for the slow-backend case: 11 loopback backends, one of them 20× slower for
//! the middle half of the run, under open-loop load (requests leave on a fixed schedule and
//! latency counts from the scheduled time, so a slow answer cannot hold back the next
//! request). For every policy it prints the slow backend's share of the requests sent while it
//! was slow and the p50/p99/p99.9 latency of the run, next to a run without the fault.
//!
//! Run with `cargo bench -p feign-lb --bench slow_backend`. Optional environment:
//! `LB_SCENARIO_SECS` (run length, default 8), `LB_SCENARIO_RPS` (default 400),
//! `LB_SCENARIO_BASE_MS` (base latency, default 5).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use feign_lb::{LoadBalancer, Policy, SlowStart, StaticSupplier};
use feign_test_support::backend::{client, Backend, Mode};
use tokio::time::{Instant, MissedTickBehavior};

const BACKENDS: usize = 11;
const SLOWDOWN: u32 = 20;

struct Outcome {
    slow_share: f64,
    p50: Duration,
    p99: Duration,
    p999: Duration,
    errors: usize,
    sent: usize,
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

async fn run(policy: Policy, fault: bool, secs: u64, rps: u64, base: Duration) -> Outcome {
    let backends: Vec<Backend> = (0..BACKENDS)
        .map(|_| Backend::start_with_delay(base))
        .collect();
    for b in &backends {
        b.set_mode(Mode::Slow);
    }
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::new("order-service", &urls))
        .policy(policy)
        .slow_start(SlowStart::disabled())
        .build();
    let orders = client(&lb, Duration::from_secs(5));

    let total = Duration::from_secs(secs);
    let (window_start, window_end) = (total / 4, total * 3 / 4);
    let period = Duration::from_nanos(1_000_000_000 / rps.max(1));
    let latencies = Arc::new(Mutex::new(Vec::with_capacity((secs * rps) as usize)));
    let errors = Arc::new(Mutex::new(0usize));
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Burst);
    let start = Instant::now();
    let (mut in_window_before, mut slow_before) = (None, 0);
    let (mut window_total, mut window_slow) = (0usize, 0usize);
    let mut tasks = Vec::new();
    let mut sent = 0usize;
    loop {
        let scheduled = ticks.tick().await;
        let at = scheduled.duration_since(start);
        if at >= total {
            break;
        }
        if fault && in_window_before.is_none() && at >= window_start {
            backends[0].set_delay(base * SLOWDOWN);
            slow_before = backends[0].hits();
            in_window_before = Some(backends.iter().map(Backend::hits).sum::<usize>());
        }
        if fault && at >= window_end && in_window_before.is_some() && window_total == 0 {
            backends[0].set_delay(base);
            window_total =
                backends.iter().map(Backend::hits).sum::<usize>() - in_window_before.unwrap_or(0);
            window_slow = backends[0].hits() - slow_before;
        }
        let (orders, latencies, errors) = (orders.clone(), latencies.clone(), errors.clone());
        sent += 1;
        let id = sent as u64;
        tasks.push(tokio::spawn(async move {
            let result = orders.get_order(id).await;
            let latency = scheduled.elapsed();
            latencies.lock().unwrap().push(latency);
            if result.is_err() {
                *errors.lock().unwrap() += 1;
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let mut sorted = latencies.lock().unwrap().clone();
    sorted.sort_unstable();
    let errors = *errors.lock().unwrap();
    Outcome {
        slow_share: if window_total == 0 {
            0.0
        } else {
            window_slow as f64 / window_total as f64
        },
        p50: percentile(&sorted, 0.50),
        p99: percentile(&sorted, 0.99),
        p999: percentile(&sorted, 0.999),
        errors,
        sent,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let secs = env("LB_SCENARIO_SECS", 8).clamp(2, 120);
    let rps = env("LB_SCENARIO_RPS", 400).clamp(10, 5_000);
    let base = Duration::from_millis(env("LB_SCENARIO_BASE_MS", 5).clamp(1, 100));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "slow backend: {BACKENDS} backends at {} ms, one at {SLOWDOWN}x for the middle half of a {secs} s run, {rps} req/s open loop",
        base.as_millis()
    );
    println!(
        "{:<13} {:>11} {:>10} {:>10} {:>10} | {:>10} {:>10} {:>10} | {:>7} {:>6}",
        "policy",
        "slow share",
        "p50",
        "p99",
        "p99.9",
        "p50 base",
        "p99 base",
        "p99.9 base",
        "p99 x",
        "errors"
    );
    for policy in [
        Policy::RoundRobin,
        Policy::Random,
        Policy::LeastRequest,
        Policy::PeakEwma,
    ] {
        let baseline = runtime.block_on(run(policy, false, secs, rps, base));
        let slow = runtime.block_on(run(policy, true, secs, rps, base));
        println!(
            "{:<13} {:>10.2}% {:>10} {:>10} {:>10} | {:>10} {:>10} {:>10} | {:>6.2}x {:>6}",
            format!("{policy:?}"),
            slow.slow_share * 100.0,
            ms(slow.p50),
            ms(slow.p99),
            ms(slow.p999),
            ms(baseline.p50),
            ms(baseline.p99),
            ms(baseline.p999),
            slow.p99.as_secs_f64() / baseline.p99.as_secs_f64().max(1e-9),
            slow.errors + baseline.errors,
        );
        let _ = (slow.sent, baseline.sent);
    }
}
