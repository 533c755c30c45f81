//! One soak run: set up, load, faults on their timeline, settle, check, report.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::RwLock;
use tokio::task::JoinHandle;

use crate::caller::{Caller, SERVICES};
use crate::fleet::{Fleet, PER_SERVICE};
use crate::gauges::Gauges;
use crate::instance::Books;
use crate::journal::{Journal, Kind};
use crate::ledger::Ledger;
use crate::live::{LiveFile, Seen};
use crate::load::{Load, Stats};
use crate::pki::Pki;
use crate::plan::{self, Action, Step};
use crate::registries::Registries;
use crate::report::{Check, Features, Outcome};
use crate::resources::{self, Sample};
use crate::settings::{self, Settings, CONVERGENCE_BOUND, QUIET};

/// What a run may fail with before it can check anything.
pub(crate) type SetupError = Box<dyn std::error::Error + Send + Sync>;

/// Runs the soak and returns its outcome; `gauges` reads the adaptive limits.
pub(crate) async fn run(settings: Settings, gauges: Gauges) -> Result<Outcome, SetupError> {
    let phases = settings.phases();
    if phases.faults_to <= phases.faults_from + Duration::from_secs(8) {
        return Err("the duration leaves no room for faults: use at least 60s".into());
    }
    let journal = Arc::new(Journal::new());
    let started = journal.started();
    let at = |offset: Duration| started + offset;
    let steps = plan::plan(settings.seed, phases.faults_from, phases.faults_to);
    let versions = 1 + steps
        .iter()
        .filter(|step| matches!(step.action, Action::Reconfigure(_)))
        .count();

    let pki = Pki::new()?;
    let live = LiveFile::start(&SERVICES)?;
    let registries = Registries::start().await?;
    let urls = registries.client_urls();
    let capacity =
        (f64::from(settings.rate) * settings.duration.as_secs_f64() * 1.1) as usize + 1000;
    let books = Books {
        posts: Arc::new(Ledger::new(capacity)),
        gets: Arc::new(Ledger::new(capacity)),
        config: Seen::new(started, versions),
    };
    let fleet = Fleet::start(
        urls.clone(),
        books.clone(),
        pki.acceptor.clone(),
        settings.seed,
    )
    .await?;
    let mut callers = Vec::new();
    for service in 0..SERVICES.len() {
        let seed = settings.seed + service as u64;
        callers.push(Caller::start(service, &urls, seed, &pki.ca, live.live()).await?);
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
            "set up: 3 registries, {} instances ({} over HTTPS), {} calls/s; warm-up until {} ms",
            SERVICES.len() * PER_SERVICE,
            SERVICES[crate::fleet::TLS_SERVICE],
            settings.rate,
            phases.warm_up.as_millis()
        ),
    );

    let callers: Arc<[Caller]> = callers.into();
    let stats = Arc::new(Stats::new(capacity));
    let paused = Arc::new(AtomicBool::new(false));
    let load = Load {
        callers: callers.clone(),
        health: fleet.health(),
        journal: journal.clone(),
        stats: stats.clone(),
        paused: paused.clone(),
        phase_starts: [at(phases.faults_from), at(phases.faults_to)],
    };
    // Setting up took this long: no load ran before.
    let set_up = started.elapsed();
    let load_until = at(phases.end.saturating_sub(Duration::from_millis(500)));
    let load = tokio::spawn(load.run(settings.rate, load_until, settings.seed));

    let trend = tokio::spawn(trend(
        journal.clone(),
        (settings.duration / 12).max(Duration::from_secs(10)),
        stats.clone(),
    ));

    tokio::time::sleep_until(at(phases.warm_up).into()).await;
    let (start_sample, paused_at) = quiet_sample(&paused, &stats, &journal).await;
    let mut ports = registries.ports();
    ports.extend(fleet.ports());
    journal.record(
        Kind::Note,
        format!("start connections: {}", resources::connections(&ports)),
    );
    paused.store(false, Ordering::SeqCst);
    let mut pauses = vec![
        (Duration::ZERO, set_up),
        (paused_at - started, started.elapsed()),
    ];
    journal.record(
        Kind::Note,
        format!("start resources: {start_sample:?}; load resumed"),
    );

    let mut runner = Runner {
        fleet,
        registries: Arc::new(RwLock::new(registries)),
        callers: callers.clone(),
        live,
        journal: journal.clone(),
        rejoins: Vec::new(),
        discoveries: Vec::new(),
    };
    let mut faults = 0u64;
    for step in &steps {
        tokio::time::sleep_until(at(step.at).into()).await;
        if step.action.is_fault() {
            faults += 1;
        }
        runner.apply(step).await?;
    }
    let Runner {
        fleet,
        registries,
        live,
        rejoins,
        discoveries,
        ..
    } = runner;
    let faults_over = journal.now_ms();
    journal.record(Kind::Note, "faults over; settling");

    let convergence = converge(&fleet, &registries, &journal).await;
    let mut rejoin_ms = Vec::new();
    for rejoin in rejoins {
        rejoin_ms.push(rejoin.await.unwrap_or(None));
    }

    let mut discovery_ms = Vec::new();
    for discovery in discoveries {
        discovery_ms.push(discovery.await.unwrap_or(None));
    }

    tokio::time::sleep_until(at(phases.end.saturating_sub(QUIET)).into()).await;
    let (end_sample, paused_at) = quiet_sample(&paused, &stats, &journal).await;
    pauses.push((paused_at - started, phases.end));
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
    let features = Features {
        discovery_ms,
        hedges: callers.iter().map(Caller::hedges).collect(),
        limits: SERVICES
            .iter()
            .map(|service| gauges.limit(service).map(|gauge| gauge.readings()))
            .collect(),
        config_applied_ms: live
            .applied()
            .iter()
            .map(|applied| (*applied - started).as_millis() as u64)
            .collect(),
        config_seen_ms: books.config.first_ms(),
        served: (0..SERVICES.len())
            .map(|service| fleet.served(service))
            .collect(),
        get_attempts: books.gets.total(),
        get_calls_answered: books.gets.executed_keys(),
    };
    let unanswered = (0..capacity as u64)
        .filter(|&key| stats.answered_posts.count(key) > 0 && books.posts.count(key) != 1)
        .count();
    let outcome = Outcome {
        settings: settings.clone(),
        phases,
        stats,
        pauses,
        duplicates: books.posts.duplicates(),
        executed_posts: books.posts.executed_keys(),
        answered_not_executed_once: unanswered,
        foreign_keys: books.posts.foreign(),
        features,
        faults,
        faults_over_ms: faults_over,
        convergence,
        rejoin_ms,
        start_sample,
        end_sample,
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

/// What carries out the plan's steps, and the timers they start.
struct Runner {
    fleet: Fleet,
    registries: Arc<RwLock<Registries>>,
    callers: Arc<[Caller]>,
    live: LiveFile,
    journal: Arc<Journal>,
    /// For each registry restart, the time until the three nodes agreed.
    rejoins: Vec<JoinHandle<Option<u64>>>,
    /// For each instance restart, the time until its service's caller listed it.
    discoveries: Vec<JoinHandle<Option<u64>>>,
}

impl Runner {
    /// Carries out one step.
    async fn apply(&mut self, step: &Step) -> Result<(), SetupError> {
        let kind = match step.action {
            _ if step.action.is_fault() => Kind::Fault,
            Action::Reconfigure(_) => Kind::Note,
            _ => Kind::Recovery,
        };
        let fleet = &mut self.fleet;
        let journal = &self.journal;
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
                // An abort must not deregister: the registries keep listing the instance until
                // its lease expires, and the callers must cope meanwhile.
                let views = self.registries.read().await.views().await;
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
                if let Some(id) = fleet.instance_id(service, slot) {
                    let callers = self.callers.clone();
                    self.discoveries
                        .push(tokio::spawn(time_discovery(callers, service, id)));
                }
            }
            Action::Proxy {
                service,
                slot,
                mode,
            } => fleet.set_proxy(service, slot, mode),
            Action::KillRegistry(node) => self.registries.write().await.kill(node).await,
            Action::RestartRegistry(node) => {
                self.registries.write().await.restart(node).await?;
                self.rejoins.push(tokio::spawn(time_rejoin(
                    node,
                    self.registries.clone(),
                    journal.clone(),
                )));
            }
            Action::SlowRegistry(node, slow) => {
                let mode = if slow {
                    crate::proxy::Mode::Latency(settings::REGISTRY_LATENCY)
                } else {
                    crate::proxy::Mode::Pass
                };
                self.registries.read().await.proxy(node).set_mode(mode);
            }
            Action::Reconfigure(version) => {
                let took = self.live.apply(version).await?;
                journal.record(
                    Kind::Note,
                    format!("  read and the clients rebuilt in {} ms", took.as_millis()),
                );
            }
        }
        Ok(())
    }
}

/// How long after an instance registered (now) its service's caller lists it (at most 10 s):
/// with push discovery, the registry's answer to the caller's waiting watch, not its next fetch.
async fn time_discovery(callers: Arc<[Caller]>, service: usize, id: String) -> Option<u64> {
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(10) {
        if callers[service].lists(SERVICES[service], &id) {
            return Some(began.elapsed().as_millis() as u64);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    None
}

/// Reads the resources with the load paused: once the calls in flight are done and the
/// callers' idle connections have expired, so that the start and the end compare like with
/// like. Under load the count of pooled connections, and so of fds and tasks, follows the
/// moment's concurrency, which on a busy machine swings by a third within seconds. The load
/// stays paused. Returns the reading and when the load was paused.
async fn quiet_sample(paused: &AtomicBool, stats: &Stats, journal: &Journal) -> (Sample, Instant) {
    paused.store(true, Ordering::SeqCst);
    let paused_at = Instant::now();
    journal.record(Kind::Note, "load paused to read the resources");
    let deadline = Instant::now() + settings::TOTAL_TIMEOUT + Duration::from_secs(1);
    while stats.in_flight.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(settings::POOL_IDLE * 2 + Duration::from_secs(2)).await;
    (
        resources::settled(5, Duration::from_millis(500)).await,
        paused_at,
    )
}

/// Notes the resources every `every`, so a report shows a leak's slope or a plateau, with the
/// CPU the process used since the last note and the machine's load: a run starved of CPU
/// shows there.
async fn trend(journal: Arc<Journal>, every: Duration, stats: Arc<Stats>) {
    let mut ticks = tokio::time::interval(every);
    let (mut cpu, mut at) = (resources::cpu_ms(), Instant::now());
    loop {
        ticks.tick().await;
        let sample = resources::sample();
        let (cpu_now, now) = (resources::cpu_ms(), Instant::now());
        let used = (cpu_now - cpu) as f64 / now.duration_since(at).as_millis().max(1) as f64;
        (cpu, at) = (cpu_now, now);
        journal.record(
            Kind::Note,
            format!(
                "resources: RSS {} KiB (anonymous {}, file-backed {}), live heap {} KiB, fds {}, tasks {}; CPU {used:.2} cores, load average {:.1}, at most {} calls in flight",
                sample.rss_kib,
                sample.rss_anon_kib,
                sample.rss_file_kib,
                sample.heap_kib,
                sample.fds,
                sample.tasks,
                resources::load_average(),
                stats.peak_in_flight.swap(0, Ordering::Relaxed),
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
