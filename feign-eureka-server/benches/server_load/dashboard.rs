//! `FEIGN_BENCH_DASHBOARD=1`: what the dashboard costs the embedded registry's heartbeats. The
//! registry (a child process, as in the main run) holds the plan's instances; renewals run at
//! the plan's rate, first alone, then while two clients reload the dashboard as fast as it
//! answers. Each phase is run `runs` times; the phases alternate.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use feign_bench::stats::{format_us, Latencies};
use tokio::runtime::Runtime;

use crate::load::{self, Plan};
use crate::servers::{Kind, Registry};

/// Reloads and bytes the dashboard readers got.
#[derive(Debug, Default)]
struct Reloads {
    pages: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
}

/// Runs the comparison and prints it.
pub(crate) fn run(runtime: &Runtime, plan: Plan, warm_up: Duration, runs: usize) {
    let registry = Registry::start(Kind::Embedded, &[]).expect("embedded registry starts");
    let url = registry.url();
    let dashboard = url.trim_end_matches("eureka/").to_owned();
    let client = load::client();
    let (took, failed) = runtime.block_on(load::register(&client, &url, plan));
    println!(
        "registered {} instances in {took:.1?} ({failed} failed)",
        plan.instances
    );
    let renewed = AtomicU64::new(0);
    if !warm_up.is_zero() {
        let warm_up = Plan {
            duration: warm_up,
            ..plan
        };
        load::renewals(runtime.handle(), &client, &url, warm_up, &renewed);
    }
    let (mut alone, mut beside) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let quiet = load::renewals(runtime.handle(), &client, &url, plan, &renewed);
        report(
            run,
            "renewals alone",
            &quiet.latencies,
            quiet.errors,
            None,
            plan,
        );
        alone.push(quiet.latencies);

        let reloads = Arc::new(Reloads::default());
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| runtime.spawn(reload(dashboard.clone(), reloads.clone(), stop.clone())))
            .collect();
        let loaded = load::renewals(runtime.handle(), &client, &url, plan, &renewed);
        stop.store(true, Ordering::Relaxed);
        for reader in readers {
            let _ = runtime.block_on(reader);
        }
        report(
            run,
            "renewals + 2 dashboard readers",
            &loaded.latencies,
            loaded.errors,
            Some(&reloads),
            plan,
        );
        beside.push(loaded.latencies);
    }
    let (alone, beside) = (Latencies::merge(&alone), Latencies::merge(&beside));
    println!("\nall runs, renewal latency from when due (p50 / p99 / max):");
    for (label, latencies) in [("alone", &alone), ("beside 2 dashboard readers", &beside)] {
        println!(
            "  {label:<28} {} / {} / {}",
            format_us(f64::from(latencies.p50_us())),
            format_us(f64::from(latencies.p99_us())),
            format_us(f64::from(latencies.max_us())),
        );
    }
    registry.stop();
}

/// Reloads the dashboard's first page until `stop`, as a browser tab left open on it would if
/// it reloaded as fast as the page comes.
async fn reload(url: String, reloads: Arc<Reloads>, stop: Arc<AtomicBool>) {
    let client = load::client();
    while !stop.load(Ordering::Relaxed) {
        let page = async {
            client
                .get(&url)
                .send()
                .await?
                .error_for_status()?
                .bytes()
                .await
        };
        match page.await {
            Ok(body) => {
                reloads.pages.fetch_add(1, Ordering::Relaxed);
                reloads
                    .bytes
                    .fetch_add(body.len() as u64, Ordering::Relaxed);
            }
            Err(_) => {
                reloads.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

fn report(
    run: usize,
    label: &str,
    latencies: &Latencies,
    errors: u64,
    reloads: Option<&Reloads>,
    plan: Plan,
) {
    let mut line = format!(
        "run {}: {label}: {} renewals, p50 {} p99 {} max {}, {errors} errors",
        run + 1,
        latencies.len(),
        format_us(f64::from(latencies.p50_us())),
        format_us(f64::from(latencies.p99_us())),
        format_us(f64::from(latencies.max_us())),
    );
    if let Some(reloads) = reloads {
        let pages = reloads.pages.load(Ordering::Relaxed);
        let bytes = reloads.bytes.load(Ordering::Relaxed);
        line.push_str(&format!(
            "; dashboard: {:.0} pages/s of {} bytes, {} errors",
            pages as f64 / plan.duration.as_secs_f64(),
            bytes.checked_div(pages).unwrap_or(0),
            reloads.errors.load(Ordering::Relaxed),
        ));
    }
    println!("{line}");
}
