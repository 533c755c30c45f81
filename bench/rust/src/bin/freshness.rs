//! Discovery freshness: how long until a client calling through feign + load balancer + Eureka
//! starts routing to an instance that registered, stops routing to one that deregistered, and
//! drops one that died without deregistering. Five setups: the embedded registry with Eureka's
//! default timings, tuned, and with push discovery (the client watches the registry), and the real Spring Cloud Netflix Eureka server (the interop
//! fixture) with Spring's defaults and tuned.
//!
//! Each run has its own application name, three instances, a discovery client and a caller
//! sending one call every 20 ms:
//!
//! 1. all three register; *register → listed* is the time from starting an instance's
//!    registration to the client's instance list holding it, *register → first call* to the
//!    first call it answers (three samples per run);
//! 2. one deregisters and keeps serving; *deregister → unlisted* is the time until the client's
//!    list no longer holds it, *deregister → last call* until the last call it answers;
//! 3. one is killed (listener and connections closed, lease left to expire); *died* is the time
//!    until the client's instance list no longer holds it (feign-lb stops picking it at its first
//!    refused connection; the errors callers saw are counted).
//!
//! The runs of one setup share its registry and run concurrently, started `--stagger-secs`
//! apart so they meet the registry's timers at different phases; each event of run k of n
//! happens (k + ½)/n of a fetch interval after the client's previous fetch, so the runs also
//! cover the client's own timer evenly. The setups run concurrently too. Every wait is capped (`--cap-secs`, default 3 min) and reported as "> cap" when hit.
//!
//! Run with `cargo run --release -p feign-bench --bin freshness -- --runs 5` (the Spring rows
//! need Java and `tests/interop/build.sh`; they are skipped otherwise).

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Parser;
use feign_bench::backend::{Backend, ServerRuntime};
use feign_bench::client::OrderService;
use feign_bench::figures::freshness::{summary, Freshness, Measured, Outcome, Setup};
use feign_bench::topology::{feign_balanced, instance_config, Renamed, SetupResult};
use feign_eureka::EurekaClient;
use feign_eureka_server::EurekaServer;
use feign_lb::{LoadBalancer, SlowStart};
use feign_tests::interop::JavaApp;
use tokio::runtime::Handle;

/// Command-line settings.
#[derive(Debug, Parser)]
#[command(about = "Time for registrations, deregistrations and deaths to reach a client")]
struct Args {
    /// Runs per setup; medians are reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// The longest any single wait may take, in seconds.
    #[arg(long, default_value_t = 180)]
    cap_secs: u64,
    /// Delay between the starts of two runs of the same setup, in seconds.
    #[arg(long, default_value_t = 5.0)]
    stagger_secs: f64,
    /// Give new instances their full share of calls at once (feign-lb's slow start, a 30 s
    /// ramp from 10 %, is on by default).
    #[arg(long)]
    no_slow_start: bool,
    /// Setups to measure.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = Setup::ALL)]
    setups: Vec<Setup>,
}

/// Spring Cloud Netflix Eureka server defaults, restored over the fixture's test tuning. The
/// standalone settings (no peer sync wait) stay as the fixture has them.
const SPRING_DEFAULTS: &[&str] = &[
    "--eureka.server.enable-self-preservation=true",
    "--eureka.server.eviction-interval-timer-in-ms=60000",
    "--eureka.server.use-read-only-response-cache=true",
    "--eureka.server.response-cache-update-interval-ms=30000",
];

/// Starts the setup's registry; `None` for a Spring setup without Java or the fixture.
async fn start(setup: Setup) -> SetupResult<Option<Registry>> {
    let registry = match setup {
        Setup::EmbeddedDefaults => {
            Registry::Embedded(EurekaServer::builder().bind("127.0.0.1:0").start().await?)
        }
        Setup::EmbeddedTuned => Registry::Embedded(
            EurekaServer::builder()
                .bind("127.0.0.1:0")
                .read_only_cache(false)
                .eviction_interval(Duration::from_secs(1))
                .self_preservation(false)
                .netflix_lease_expiry(false)
                .start()
                .await?,
        ),
        // The read-only cache stays on (refreshed every 30 s): the watch answers past it.
        Setup::EmbeddedPush => Registry::Embedded(
            EurekaServer::builder()
                .bind("127.0.0.1:0")
                .eviction_interval(Duration::from_secs(1))
                .self_preservation(false)
                .netflix_lease_expiry(false)
                .start()
                .await?,
        ),
        Setup::SpringDefaults | Setup::SpringTuned => {
            let args: &'static [&'static str] = if setup.tuned() { &[] } else { SPRING_DEFAULTS };
            match tokio::task::spawn_blocking(move || JavaApp::eureka_server(args)).await? {
                Ok(app) => Registry::Spring(app),
                Err(_) => return Ok(None),
            }
        }
    };
    Ok(Some(registry))
}

/// A running registry of either kind.
enum Registry {
    Embedded(EurekaServer),
    Spring(JavaApp),
}

impl Registry {
    fn url(&self) -> String {
        match self {
            Registry::Embedded(server) => server.url().to_owned(),
            Registry::Spring(app) => app.eureka_url(),
        }
    }

    async fn stop(self) {
        match self {
            Registry::Embedded(server) => server.shutdown().await,
            Registry::Spring(app) => {
                let _ = tokio::task::spawn_blocking(move || app.kill()).await;
            }
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Arc::new(Args::parse());
    let servers = match ServerRuntime::new(2) {
        Ok(servers) => Arc::new(servers),
        Err(err) => {
            eprintln!("freshness: cannot start the servers' runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "freshness: {} runs per setup, {} s apart, waits capped at {} s",
        args.runs, args.stagger_secs, args.cap_secs
    );
    let mut tasks = Vec::new();
    for &setup in &args.setups {
        let (args, handle) = (args.clone(), servers.handle());
        tasks.push((setup, tokio::spawn(measure_setup(setup, args, handle))));
    }
    let mut runs = Vec::new();
    let mut failed = false;
    for (setup, task) in tasks {
        match task.await {
            Ok(Ok(Some(measured))) => runs.extend(measured),
            Ok(Ok(None)) => eprintln!("freshness: {setup:?} skipped: no Java or no fixture jar"),
            Ok(Err(err)) => {
                eprintln!("freshness: {setup:?}: {err}");
                failed = true;
            }
            Err(err) => {
                eprintln!("freshness: {setup:?} panicked: {err}");
                failed = true;
            }
        }
    }
    let freshness = Freshness {
        runs,
        cap: Duration::from_secs(args.cap_secs),
        slow_start: !args.no_slow_start,
    };
    println!(
        "Discovery freshness; caller sends one call per 20 ms through feign + LB + Eureka\n\n{}",
        summary(&freshness)
    );
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

async fn measure_setup(
    setup: Setup,
    args: Arc<Args>,
    servers: Handle,
) -> SetupResult<Option<Vec<Measured>>> {
    let Some(registry) = start(setup).await? else {
        return Ok(None);
    };
    let url = registry.url();
    let mut tasks = Vec::new();
    let runs = args.runs;
    for run in 0..runs {
        let (url, servers) = (url.clone(), servers.clone());
        let delay = Duration::from_secs_f64(args.stagger_secs * run as f64);
        let cap = Duration::from_secs(args.cap_secs);
        let slow_start = !args.no_slow_start;
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let phase = (run as f64 + 0.5) / runs as f64;
            measure_run(setup, &url, run, phase, cap, slow_start, &servers).await
        }));
    }
    let mut outcomes = Vec::new();
    for (run, task) in tasks.into_iter().enumerate() {
        match task.await {
            Ok(Ok(outcome)) => {
                let measured = Measured {
                    setup,
                    run: run + 1,
                    outcome,
                };
                eprintln!("{measured}");
                outcomes.push(measured);
            }
            Ok(Err(err)) => eprintln!("  {setup:?} run {} failed: {err}", run + 1),
            Err(err) => eprintln!("  {setup:?} run {} panicked: {err}", run + 1),
        }
    }
    registry.stop().await;
    Ok(Some(outcomes))
}

/// Registers an instance of `app` on `port` with the setup's timings.
async fn register(setup: Setup, url: &str, app: &str, port: u16) -> SetupResult<EurekaClient> {
    let mut instance = instance_config(app, port);
    let mut builder = EurekaClient::builder()
        .service_urls([url])
        .fetch_registry(false);
    if setup.tuned() {
        instance = instance
            .lease_renewal_interval(Duration::from_secs(1))
            .lease_expiration_duration(Duration::from_secs(3));
        builder = builder.registration_jitter(Duration::ZERO);
    }
    Ok(builder.instance(instance).start().await?)
}

fn listed(discovery: &EurekaClient, app: &str, port: u16) -> bool {
    discovery
        .instances(app)
        .is_some_and(|instances| instances.iter().any(|instance| instance.port() == port))
}

/// When the client first lists (`listed`) or no longer lists (`!listed`) each of `ports`,
/// checked every millisecond from now, each for at most `cap`.
fn spawn_listing_watch<const N: usize>(
    discovery: &EurekaClient,
    app: &str,
    ports: [u16; N],
    wanted: bool,
    cap: Duration,
) -> tokio::task::JoinHandle<[Option<Instant>; N]> {
    let (discovery, app) = (discovery.clone(), app.to_owned());
    tokio::spawn(async move {
        let started = Instant::now();
        let mut at = [None; N];
        while at.iter().any(Option::is_none) && started.elapsed() < cap {
            for (slot, port) in at.iter_mut().zip(ports) {
                if slot.is_none() && listed(&discovery, &app, port) == wanted {
                    *slot = Some(Instant::now());
                }
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        at
    })
}

/// Polls `done` every 10 ms until it holds or `cap` has passed since `from`; returns when it
/// held.
async fn wait_until(
    from: Instant,
    cap: Duration,
    mut done: impl FnMut() -> bool,
) -> Option<Instant> {
    loop {
        if done() {
            return Some(Instant::now());
        }
        if from.elapsed() > cap {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One run; each event waits `phase` × the fetch interval after the client's last fetch, so
/// that the runs of a setup meet the client's timer at phases spread evenly over its interval.
async fn measure_run(
    setup: Setup,
    url: &str,
    run: usize,
    phase: f64,
    cap: Duration,
    slow_start: bool,
    servers: &Handle,
) -> SetupResult<Outcome> {
    let app = format!("order-service-{run}");
    let offset = setup.phase_span().mul_f64(phase);
    let stable = Backend::start(servers)?;
    let leaving = Backend::start(servers)?;
    let dying = Backend::start(servers)?;

    let discovery = EurekaClient::builder()
        .service_urls([url])
        .allow_loopback(true)
        .registry_fetch_interval(setup.fetch_interval())
        .watch(setup == Setup::EmbeddedPush)
        .start()
        .await?;
    let mut balancer =
        LoadBalancer::builder().supplier(Renamed::new(discovery.supplier(), app.clone()));
    if !slow_start {
        balancer = balancer.slow_start(SlowStart::disabled());
    }
    let balancer = balancer.build();
    let client = feign_balanced(balancer)?;

    let stop = Arc::new(AtomicBool::new(false));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let caller = {
        let (stop, failures) = (stop.clone(), failures.clone());
        tokio::spawn(async move {
            let mut id = 0;
            while !stop.load(Ordering::Relaxed) {
                id = (id + 1) % 1000;
                let call = tokio::time::timeout(Duration::from_secs(2), client.get_order(id));
                if !matches!(call.await, Ok(Ok(ref order)) if order.id == id) {
                    failures
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .push(Instant::now());
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };

    let mut outcome = Outcome::default();
    // The client fetched when it started.
    tokio::time::sleep(offset).await;
    let started = Instant::now();
    let ports = [stable.port(), leaving.port(), dying.port()];
    let listing = spawn_listing_watch(&discovery, &app, ports, true, cap);
    let mut registrations = Vec::new();
    for backend in [&stable, &leaving, &dying] {
        let at = Instant::now();
        registrations.push((at, register(setup, url, &app, backend.port()).await?));
    }
    let all_routed = wait_until(started, cap, || {
        [&stable, &leaving, &dying]
            .iter()
            .all(|backend| backend.first_hit().is_some())
    })
    .await;
    let listed_at = listing.await.unwrap_or_default();
    for (backend, (at, _)) in [&stable, &leaving, &dying].iter().zip(&registrations) {
        let index = outcome.listed.len();
        outcome.listed.push(
            listed_at
                .get(index)
                .copied()
                .flatten()
                .map(|listed| listed.saturating_duration_since(*at)),
        );
        outcome.register.push(
            backend
                .first_hit()
                .map(|hit| hit.saturating_duration_since(*at)),
        );
    }
    let mut registrations = registrations.into_iter().map(|(_, client)| client);
    let (stable_reg, leaving_reg, dying_reg) = (
        registrations.next().ok_or("no registration")?,
        registrations.next().ok_or("no registration")?,
        registrations.next().ok_or("no registration")?,
    );
    if all_routed.is_none() {
        stop.store(true, Ordering::Relaxed);
        return Ok(outcome);
    }

    // Deregister and keep serving: when does the last call arrive? (A fetch has just brought
    // the last of the three.)
    tokio::time::sleep(offset).await;
    let unlisting = spawn_listing_watch(&discovery, &app, [leaving.port()], false, cap);
    let left = Instant::now();
    leaving_reg.shutdown().await;
    let quiet = Duration::from_millis(300);
    let stopped = wait_until(left, cap, || {
        !listed(&discovery, &app, leaving.port())
            && leaving.last_hit().is_none_or(|hit| hit.elapsed() > quiet)
    })
    .await;
    outcome.deregister = stopped
        .and_then(|_| leaving.last_hit())
        .map(|hit| hit.saturating_duration_since(left));
    outcome.unlisted = unlisting
        .await
        .ok()
        .and_then(|at| at[0])
        .map(|at| at.saturating_duration_since(left));

    // Die without deregistering: when does the client drop it? (A fetch has just dropped the
    // deregistered one.)
    tokio::time::sleep(offset).await;
    let killed = Instant::now();
    dying.kill();
    drop(dying_reg);
    outcome.died = wait_until(killed, cap, || !listed(&discovery, &app, dying.port()))
        .await
        .map(|at| at.saturating_duration_since(killed));

    stop.store(true, Ordering::Relaxed);
    let _ = caller.await;
    outcome.errors_after_kill = failures
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .iter()
        .filter(|at| **at >= killed)
        .count();
    stable_reg.shutdown().await;
    discovery.shutdown().await;
    Ok(outcome)
}
