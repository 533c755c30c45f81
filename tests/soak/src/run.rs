//! One soak run: set up, load, faults on their timeline, settle, check, report.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::RwLock;

use crate::caller::{Caller, SERVICES};
use crate::fleet::{Fleet, PER_SERVICE};
use crate::journal::{Journal, Kind};
use crate::ledger::Ledger;
use crate::load::{Load, Stats};
use crate::plan::{self, Action, Step};
use crate::registries::Registries;
use crate::report::{Check, Outcome};
use crate::resources::{self, Sample};
use crate::settings::{self, Settings, CONVERGENCE_BOUND, QUIET};

/// What a run may fail with before it can check anything.
pub(crate) type SetupError = Box<dyn std::error::Error + Send + Sync>;

/// Runs the soak and returns its outcome.
pub(crate) async fn run(settings: Settings) -> Result<Outcome, SetupError> {
    let phases = settings.phases();
    if phases.faults_to <= phases.faults_from + Duration::from_secs(8) {
        return Err("the duration leaves no room for faults: use at least 60s".into());
    }
    let journal = Arc::new(Journal::new());
    let started = journal.started();
    let at = |offset: Duration| started + offset;

    let registries = Registries::start().await?;
    let urls = registries.client_urls();
    let capacity =
        (f64::from(settings.rate) * settings.duration.as_secs_f64() * 1.1) as usize + 1000;
    let ledger = Arc::new(Ledger::new(capacity));
    let mut fleet = Fleet::start(urls.clone(), ledger.clone(), settings.seed).await?;
    let mut callers = Vec::new();
    for service in 0..SERVICES.len() {
        callers.push(Caller::start(service, &urls, settings.seed + service as u64).await?);
    }
    for (service, caller) in callers.iter().enumerate() {
        if !caller
            .await_instances(SERVICES[service], PER_SERVICE, Duration::from_secs(20))
            .await
        {
            return Err(format!("{} was not discovered within 20 s", SERVICES[service]).into());
        }
    }
    journal.record(
        Kind::Note,
        format!(
            "registries {}, reached through proxies {}",
            registries.urls().join(" "),
            urls.join(" ")
        ),
    );
    journal.record(
        Kind::Note,
        format!(
            "set up: 3 registries, {} instances, {} calls/s; warm-up until {} ms",
            SERVICES.len() * PER_SERVICE,
            settings.rate,
            phases.warm_up.as_millis()
        ),
    );

    let callers: Arc<[Caller]> = callers.into();
    let stats = Arc::new(Stats::default());
    let paused = Arc::new(AtomicBool::new(false));
    let load = Load {
        callers: callers.clone(),
        health: fleet.health(),
        journal: journal.clone(),
        stats: stats.clone(),
        paused: paused.clone(),
    };
    let load_until = at(phases.end.saturating_sub(Duration::from_millis(500)));
    let load = tokio::spawn(load.run(settings.rate, load_until, settings.seed));

    let first_half_rss = Arc::new(AtomicU64::new(0));
    let trend = tokio::spawn(trend(
        journal.clone(),
        (settings.duration / 12).max(Duration::from_secs(10)),
        at(settings.duration / 2),
        first_half_rss.clone(),
    ));

    tokio::time::sleep_until(at(phases.warm_up).into()).await;
    let start_sample = quiet_sample(&paused, &stats, &journal).await;
    let mut ports = registries.ports();
    ports.extend(fleet.ports());
    journal.record(
        Kind::Note,
        format!("start connections: {}", resources::connections(&ports)),
    );
    paused.store(false, Ordering::SeqCst);
    journal.record(
        Kind::Note,
        format!("start resources: {start_sample:?}; load resumed"),
    );

    let registries = Arc::new(RwLock::new(registries));
    let steps = plan::plan(settings.seed, phases.faults_from, phases.faults_to);
    let mut faults = 0u64;
    let mut rejoins = Vec::new();
    for step in &steps {
        tokio::time::sleep_until(at(step.at).into()).await;
        if step.action.is_fault() {
            faults += 1;
        }
        if let Some(rejoin) = apply(step, &mut fleet, &registries, &journal).await? {
            rejoins.push(rejoin);
        }
    }
    let faults_over = journal.now_ms();
    journal.record(Kind::Note, "faults over; settling");

    let convergence = converge(&fleet, &registries, &journal).await;
    let mut rejoin_ms = Vec::new();
    for rejoin in rejoins {
        rejoin_ms.push(rejoin.await.unwrap_or(None));
    }

    tokio::time::sleep_until(at(phases.end.saturating_sub(QUIET)).into()).await;
    let end_sample = quiet_sample(&paused, &stats, &journal).await;
    let mut ports = registries.read().await.ports();
    ports.extend(fleet.ports());
    journal.record(
        Kind::Note,
        format!("end connections: {}", resources::connections(&ports)),
    );
    journal.record(Kind::Note, format!("end resources: {end_sample:?}"));
    let _ = load.await;
    trend.abort();

    let counters: Vec<String> = callers
        .iter()
        .enumerate()
        .map(|(service, caller)| {
            format!(
                "{}: {}",
                SERVICES[service],
                caller.counters(SERVICES[service])
            )
        })
        .collect();
    let outcome = Outcome {
        settings: settings.clone(),
        phases,
        stats,
        duplicates: ledger.duplicates(),
        executed_posts: ledger.executed_keys(),
        foreign_keys: ledger.foreign(),
        faults,
        faults_over_ms: faults_over,
        convergence,
        rejoin_ms,
        start_sample,
        end_sample,
        first_half_rss_kib: first_half_rss.load(Ordering::SeqCst),
        counters,
        journal: journal.clone(),
        checks: Vec::<Check>::new(),
    };

    for caller in callers.iter() {
        caller.shutdown().await;
    }
    fleet.shutdown().await;
    if let Ok(registries) = Arc::try_unwrap(registries) {
        registries.into_inner().shutdown().await;
    }
    Ok(outcome.checked())
}

/// Carries out one step; a registry restart returns the watcher that times its rejoining.
async fn apply(
    step: &Step,
    fleet: &mut Fleet,
    registries: &Arc<RwLock<Registries>>,
    journal: &Arc<Journal>,
) -> Result<Option<tokio::task::JoinHandle<Option<u64>>>, SetupError> {
    let kind = if step.action.is_fault() {
        Kind::Fault
    } else {
        Kind::Recovery
    };
    let subject = match step.action {
        Action::Stop { service, slot }
        | Action::Abort { service, slot }
        | Action::Proxy { service, slot, .. } => format!(" ({})", fleet.label(service, slot)),
        _ => String::new(),
    };
    journal.record(kind, format!("{}{subject}", step.action));
    match step.action {
        Action::Stop { service, slot } => fleet.stop(service, slot).await,
        Action::Abort { service, slot } => {
            let id = fleet.instance_id(service, slot);
            fleet.abort(service, slot);
            // An abort must not deregister: the registries keep listing the instance until its
            // lease expires, and the callers must cope meanwhile.
            let views = registries.read().await.views().await;
            let listing = views
                .iter()
                .flatten()
                .filter(|view| {
                    view.iter()
                        .any(|(_, listed, _)| Some(listed) == id.as_ref())
                })
                .count();
            journal.record(
                Kind::Note,
                format!(
                    "  aborted without deregistering: still listed by {listing} of the {} nodes up",
                    views.iter().flatten().count()
                ),
            );
        }
        Action::Restart { service, slot } => {
            fleet.restart(service, slot).await?;
            journal.record(Kind::Note, format!("  now {}", fleet.label(service, slot)));
        }
        Action::Proxy {
            service,
            slot,
            mode,
        } => fleet.set_proxy(service, slot, mode),
        Action::KillRegistry(node) => registries.write().await.kill(node).await,
        Action::RestartRegistry(node) => {
            registries.write().await.restart(node).await?;
            return Ok(Some(tokio::spawn(time_rejoin(
                node,
                registries.clone(),
                journal.clone(),
            ))));
        }
        Action::SlowRegistry(node, slow) => {
            let mode = if slow {
                crate::proxy::Mode::Latency(settings::REGISTRY_LATENCY)
            } else {
                crate::proxy::Mode::Pass
            };
            registries.read().await.proxy(node).set_mode(mode);
        }
    }
    Ok(None)
}

/// Reads the resources with the load paused: once the calls in flight are done and the
/// callers' idle connections have expired, so that the start and the end compare like with
/// like. Under load the count of pooled connections, and so of fds and tasks, follows the
/// moment's concurrency, which on a busy machine swings by a third within seconds. The load
/// stays paused.
async fn quiet_sample(paused: &AtomicBool, stats: &Stats, journal: &Journal) -> Sample {
    paused.store(true, Ordering::SeqCst);
    journal.record(Kind::Note, "load paused to read the resources");
    let deadline = Instant::now() + settings::TOTAL_TIMEOUT + Duration::from_secs(1);
    while stats.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(settings::POOL_IDLE * 2 + Duration::from_secs(2)).await;
    resources::settled(5, Duration::from_millis(500)).await
}

/// Notes the resources every `every`, so a report shows a leak's slope or a plateau, and keeps
/// the highest RSS read before `half_way` in `first_half_rss`.
async fn trend(
    journal: Arc<Journal>,
    every: Duration,
    half_way: Instant,
    first_half_rss: Arc<AtomicU64>,
) {
    let mut ticks = tokio::time::interval(every);
    loop {
        ticks.tick().await;
        let sample = resources::sample();
        if Instant::now() < half_way {
            first_half_rss.fetch_max(sample.rss_kib, Ordering::SeqCst);
        }
        journal.record(
            Kind::Note,
            format!(
                "resources: RSS {} KiB, live heap {} KiB, fds {}, tasks {}",
                sample.rss_kib, sample.heap_kib, sample.fds, sample.tasks
            ),
        );
    }
}

/// How long a restarted registry node takes until all three nodes list the same instances
/// (at most 30 s).
async fn time_rejoin(
    node: usize,
    registries: Arc<RwLock<Registries>>,
    journal: Arc<Journal>,
) -> Option<u64> {
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(30) {
        let views = registries.read().await.views().await;
        if let [Some(a), Some(b), Some(c)] = &views[..] {
            if a == b && b == c && !a.is_empty() {
                let ms = began.elapsed().as_millis() as u64;
                journal.record(
                    Kind::Note,
                    format!("registry node {node} rejoined: the three views agree {ms} ms after its restart ({} instances)", a.len()),
                );
                return Some(ms);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    journal.record(
        Kind::Note,
        format!("registry node {node} did not agree with its peers within 30 s of its restart"),
    );
    None
}

/// Once the faults are over: how long until every node lists exactly the running instances,
/// all `UP` (at most [`CONVERGENCE_BOUND`]); `None` if they did not within it.
async fn converge(
    fleet: &Fleet,
    registries: &Arc<RwLock<Registries>>,
    journal: &Journal,
) -> Option<u64> {
    let expected = fleet.expected_view();
    let began = Instant::now();
    let mut last = Vec::new();
    while began.elapsed() < CONVERGENCE_BOUND {
        let views = registries.read().await.views().await;
        if !fleet.proxies_faulting() && views.iter().all(|view| view.as_ref() == Some(&expected)) {
            let ms = began.elapsed().as_millis() as u64;
            journal.record(
                Kind::Note,
                format!("registries converged {ms} ms after the last fault: {} instances UP on all 3 nodes", expected.len()),
            );
            return Some(ms);
        }
        last = views;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let sizes: Vec<String> = last
        .iter()
        .map(|view| {
            view.as_ref()
                .map_or("down".to_owned(), |v| v.len().to_string())
        })
        .collect();
    journal.record(
        Kind::Note,
        format!(
            "registries did not converge within {} s: expected {} instances, nodes list {}",
            CONVERGENCE_BOUND.as_secs(),
            expected.len(),
            sizes.join(", ")
        ),
    );
    None
}
