//! The checks and the report: each check PASS or FAIL with its numbers, then totals, then the
//! journal of every fault and failed call.

use std::fmt::Write as _;
use std::sync::Arc;

use std::time::Duration;

use crate::caller::SERVICES;
use crate::fleet::TLS_SERVICE;
use crate::journal::{self, Journal, Kind};
use crate::load::{MethodStats, Stats};
use crate::resources::Sample;
use crate::settings::{
    self, drift, read, Phases, Settings, ADAPTIVE_WINDOWS_FLOOR, CONFIG_SEEN_BOUND,
    CONVERGENCE_BOUND, DISCOVERY_BOUND, PHASE_CALLS_FLOOR, POST_FAILURE_BOUND, RESOURCE_TOLERANCE,
    RSS_ALLOWANCE_KIB, SLOT_SHARE_FLOOR,
};

/// One check's verdict.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    /// What it checks.
    pub(crate) name: &'static str,
    /// Whether it held.
    pub(crate) pass: bool,
    /// Its numbers.
    pub(crate) detail: String,
}

/// What a run saw of the features its plan exercises.
pub(crate) struct Features {
    /// For each instance restart, how long until its caller listed it, in ms.
    pub(crate) discovery_ms: Vec<Option<u64>>,
    /// Each caller's hedges: sent, and refused by the hedge budget.
    pub(crate) hedges: Vec<(u64, u64)>,
    /// Each caller's adaptive limit: lowest, highest, last, times set.
    pub(crate) limits: Vec<Option<(u64, u64, u64, u64)>>,
    /// When each configuration version was applied, in ms since the start.
    pub(crate) config_applied_ms: Vec<u64>,
    /// When the instances first saw each version on a request.
    pub(crate) config_seen_ms: Vec<Option<u64>>,
    /// Requests answered by each slot, by service.
    pub(crate) served: Vec<Vec<u64>>,
    /// GET requests the instances answered, and the calls they belonged to.
    pub(crate) get_attempts: u64,
    pub(crate) get_calls_answered: usize,
}

/// What a run saw.
pub(crate) struct Outcome {
    pub(crate) settings: Settings,
    pub(crate) phases: Phases,
    pub(crate) stats: Arc<Stats>,
    /// When the load was paused, from .. to, since the start.
    pub(crate) pauses: Vec<(Duration, Duration)>,
    /// POST keys executed more than once, with their counts.
    pub(crate) duplicates: Vec<(usize, u8)>,
    pub(crate) executed_posts: usize,
    /// POSTs answered with success whose key was not executed exactly once.
    pub(crate) answered_not_executed_once: usize,
    pub(crate) foreign_keys: u64,
    pub(crate) features: Features,
    pub(crate) faults: u64,
    pub(crate) faults_over_ms: u64,
    /// Time from the end of the faults until the registries agreed with the fleet.
    pub(crate) convergence: Option<u64>,
    /// For each registry restart, the time until the three nodes agreed.
    pub(crate) rejoin_ms: Vec<Option<u64>>,
    pub(crate) start_sample: Sample,
    pub(crate) end_sample: Sample,
    /// The balancers' counters, one line per service.
    pub(crate) counters: Vec<String>,
    pub(crate) journal: Arc<Journal>,
    pub(crate) checks: Vec<Check>,
}

impl Outcome {
    /// The outcome with its checks decided.
    pub(crate) fn checked(mut self) -> Outcome {
        let get = &self.stats.get;
        let violations = read(&get.failed_while_healthy);
        self.checks.push(Check {
            name: "no failed GET while a healthy instance exists",
            pass: violations == 0,
            detail: format!(
                "{} GETs, {} failed, {violations} of them while the service had a healthy instance",
                read(&get.calls),
                read(&get.failed)
            ),
        });
        let worst = self
            .duplicates
            .iter()
            .map(|&(_, count)| count)
            .max()
            .unwrap_or(0);
        self.checks.push(Check {
            name: "no POST executed twice, every POST answered executed once",
            pass: self.duplicates.is_empty()
                && self.foreign_keys == 0
                && self.answered_not_executed_once == 0,
            detail: format!(
                "{} POSTs, {} answered, {} keys executed, {} executed more than once (at most {worst} times), {} answered but not executed exactly once{}{}",
                read(&self.stats.post.calls),
                read(&self.stats.post.ok),
                self.executed_posts,
                self.duplicates.len(),
                self.answered_not_executed_once,
                match self.duplicates.len() {
                    0 => String::new(),
                    _ => format!(
                        ": keys {}",
                        self.duplicates
                            .iter()
                            .take(20)
                            .map(|(key, count)| format!("{key}x{count}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                },
                match self.foreign_keys {
                    0 => String::new(),
                    n => format!(", {n} unknown keys"),
                }
            ),
        });
        self.checks.push(Check {
            name: "registries converge after the faults",
            pass: self.convergence.is_some(),
            detail: match self.convergence {
                Some(ms) => format!(
                    "all 3 nodes list exactly the running instances, UP, {ms} ms after the last fault (bound {} s)",
                    CONVERGENCE_BOUND.as_secs()
                ),
                None => format!("not within {} s", CONVERGENCE_BOUND.as_secs()),
            },
        });
        let (start, end) = (self.start_sample, self.end_sample);
        // Both readings with the load paused and the callers' idle connections reaped, so they
        // compare like with like; one-sided: ending below the start is no leak.
        let drifts = [
            ("live heap", start.heap_kib, end.heap_kib, " KiB", 0),
            ("RSS", start.rss_kib, end.rss_kib, " KiB", RSS_ALLOWANCE_KIB),
            ("fds", start.fds, end.fds, "", 0),
            ("tasks", start.tasks, end.tasks, "", 0),
        ];
        let pass = drifts.iter().all(|&(_, s, e, _, allowance)| {
            drift(s, e) <= RESOURCE_TOLERANCE || e <= s + allowance
        });
        self.checks.push(Check {
            name:
                "no leak: live heap, fds and tasks end at most 10 % above the start, RSS at most \
                   10 % or 4 MiB",
            pass,
            detail: format!(
                "{} (RSS of it anonymous {} -> {} KiB, file-backed {} -> {} KiB)",
                drifts
                    .iter()
                    .map(|&(name, s, e, unit, _)| {
                        format!(
                            "{name} {s}{unit} -> {e}{unit} ({:+.1} %)",
                            drift(s, e) * 100.0
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                start.rss_anon_kib,
                end.rss_anon_kib,
                start.rss_file_kib,
                end.rss_file_kib,
            ),
        });
        self.check_load();
        self.check_features();
        self
    }

    /// How long the load ran between `from` and `to` (since the start): the time not paused.
    fn loaded(&self, from: Duration, to: Duration) -> Duration {
        let paused: Duration = self
            .pauses
            .iter()
            .map(|&(a, b)| b.min(to).saturating_sub(a.max(from)))
            .sum();
        to.saturating_sub(from).saturating_sub(paused)
    }

    /// The load ran: calls in every phase, every slot answering its share; and the POSTs that
    /// failed were few, all while faults ran.
    fn check_load(&mut self) {
        let p = self.phases;
        let bounds = [
            ("warm-up", Duration::ZERO, p.faults_from),
            ("faults", p.faults_from, p.faults_to),
            ("settling", p.faults_to, p.end),
        ];
        let rate = f64::from(self.settings.rate);
        let mut pass = true;
        let mut phases = Vec::new();
        for (i, &(name, from, to)) in bounds.iter().enumerate() {
            let calls = read(&self.stats.phases[i].calls);
            let floor = (rate * self.loaded(from, to).as_secs_f64() * PHASE_CALLS_FLOOR) as u64;
            pass &= calls >= floor && calls > 0;
            phases.push(format!("{name} {calls} (floor {floor})"));
        }
        let mut slots = Vec::new();
        for (service, served) in self.features.served.iter().enumerate() {
            let mean = served.iter().sum::<u64>() as f64 / served.len().max(1) as f64;
            let floor = (mean * SLOT_SHARE_FLOOR) as u64;
            pass &= served.iter().all(|&n| n >= floor && n > 0);
            slots.push(format!(
                "{}{} {} (floor {floor})",
                SERVICES[service],
                if service == TLS_SERVICE {
                    " over HTTPS"
                } else {
                    ""
                },
                served
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        self.checks.push(Check {
            name: "the load ran: calls in every phase, every instance slot answering its share",
            pass,
            detail: format!(
                "calls started per phase: {}, the floor {:.0} % of {} calls/s over the time the load was not paused; requests answered per slot: {}, the floor {:.0} % of the service's mean",
                phases.join(", "),
                PHASE_CALLS_FLOOR * 100.0,
                self.settings.rate,
                slots.join("; "),
                SLOT_SHARE_FLOOR * 100.0
            ),
        });

        let failed = |i: usize| read(&self.stats.phases[i].posts_failed);
        let during = read(&self.stats.phases[1].posts);
        let bound = (during as f64 * POST_FAILURE_BOUND) as u64;
        self.checks.push(Check {
            name: "few POSTs fail, and only while faults run",
            pass: failed(0) == 0 && failed(2) == 0 && failed(1) <= bound,
            detail: format!(
                "failed POSTs: {} in the warm-up, {} of {during} in the faults phase (bound {bound}, {:.0} %), {} settling",
                failed(0),
                failed(1),
                POST_FAILURE_BOUND * 100.0,
                failed(2)
            ),
        });
    }

    /// Push discovery, hedging, the adaptive limit and live configuration did their part.
    fn check_features(&mut self) {
        let f = &self.features;
        let mut delays: Vec<u64> = f.discovery_ms.iter().flatten().copied().collect();
        delays.sort_unstable();
        let median = delays.get(delays.len() / 2).copied();
        let missed = f.discovery_ms.iter().filter(|d| d.is_none()).count();
        self.checks.push(Check {
            name: "push discovery: a restarted instance reaches its caller within the fetch interval",
            pass: median.is_some_and(|m| m <= DISCOVERY_BOUND.as_millis() as u64) && missed == 0,
            detail: format!(
                "{} restarts, listed by the caller after a median {} ms (bound {} ms; fetches every {} ms), at most {} ms, {missed} never",
                f.discovery_ms.len(),
                median.map_or("-".to_owned(), |m| m.to_string()),
                DISCOVERY_BOUND.as_millis(),
                settings::FETCH_INTERVAL.as_millis(),
                delays.last().map_or("-".to_owned(), |m| m.to_string()),
            ),
        });

        let sent: u64 = f.hedges.iter().map(|&(sent, _)| sent).sum();
        let refused: u64 = f.hedges.iter().map(|&(_, refused)| refused).sum();
        let extra = f.get_attempts.saturating_sub(f.get_calls_answered as u64);
        self.checks.push(Check {
            name: "hedging: slow GETs were hedged",
            pass: sent > 0,
            detail: format!(
                "{sent} hedges sent ({}), {refused} refused by the hedge budget; the instances answered {} GET requests for {} calls ({extra} beyond a call's first: hedges and retries)",
                f.hedges
                    .iter()
                    .enumerate()
                    .map(|(service, (sent, _))| format!("{} {sent}", SERVICES[service]))
                    .collect::<Vec<_>>()
                    .join(", "),
                f.get_attempts,
                f.get_calls_answered,
            ),
        });

        let shed = read(&self.stats.shed);
        let mut pass = shed == 0;
        let mut limits = Vec::new();
        for (service, limit) in f.limits.iter().enumerate() {
            match limit {
                Some((lowest, highest, last, sets)) => {
                    pass &= *sets >= ADAPTIVE_WINDOWS_FLOOR;
                    limits.push(format!(
                        "{} set {sets} times, {lowest}..{highest}, last {last}",
                        SERVICES[service]
                    ));
                }
                None => {
                    pass = false;
                    limits.push(format!("{} never set", SERVICES[service]));
                }
            }
        }
        self.checks.push(Check {
            name: "adaptive limit: measured under the faults, shedding nothing",
            pass,
            detail: format!(
                "limits {} (at least {ADAPTIVE_WINDOWS_FLOOR} windows each); {shed} calls shed",
                limits.join("; ")
            ),
        });

        let mut pass = true;
        let mut lags = Vec::new();
        for (version, applied) in f.config_applied_ms.iter().enumerate() {
            let seen = f.config_seen_ms.get(version).copied().flatten();
            let lag = seen.map(|seen| seen.saturating_sub(*applied));
            pass &= lag.is_some_and(|lag| lag <= CONFIG_SEEN_BOUND.as_millis() as u64);
            lags.push(lag.map_or_else(|| "never".to_owned(), |lag| format!("{lag} ms")));
        }
        self.checks.push(Check {
            name: "live configuration: every edit reaches the calls",
            pass,
            detail: format!(
                "{} versions, each first seen on a request after (bound {} ms): {}",
                f.config_applied_ms.len(),
                CONFIG_SEEN_BOUND.as_millis(),
                lags.join(", ")
            ),
        });
    }

    /// Whether every check held.
    pub(crate) fn passed(&self) -> bool {
        self.checks.iter().all(|check| check.pass)
    }

    /// The whole report.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        let s = &self.settings;
        let p = &self.phases;
        let _ = writeln!(out, "feign-rs chaos soak");
        let _ = writeln!(
            out,
            "duration {} s, seed {}, {} calls/s; warm-up to {} s, faults {}-{} s, settling to the end",
            s.duration.as_secs(),
            s.seed,
            s.rate,
            p.warm_up.as_secs(),
            p.faults_from.as_secs(),
            p.faults_to.as_secs()
        );
        let _ = writeln!(
            out,
            "client: {:?}, connect {} ms, read {} ms, total {} ms, 3 retries on other instances, \
             budget 50 % + 20/s, ejection after a refused connection or 3 failures (5-30 s, up to 50 %)",
            settings::POLICY,
            settings::CONNECT_TIMEOUT.as_millis(),
            settings::READ_TIMEOUT.as_millis(),
            settings::TOTAL_TIMEOUT.as_millis()
        );
        let _ = writeln!(
            out,
            "eureka: heartbeat {} ms, lease {} ms, eviction {} ms, fetch {} ms",
            settings::LEASE_RENEWAL.as_millis(),
            settings::LEASE_EXPIRATION.as_millis(),
            settings::EVICTION_INTERVAL.as_millis(),
            settings::FETCH_INTERVAL.as_millis()
        );
        let _ = writeln!(out, "\nchecks");
        for (n, check) in self.checks.iter().enumerate() {
            let verdict = if check.pass { "PASS" } else { "FAIL" };
            let _ = writeln!(
                out,
                "  {}. {verdict}  {}: {}",
                n + 1,
                check.name,
                check.detail
            );
        }
        let (entries, dropped) = self.journal.entries();
        let errors = entries.iter().filter(|e| e.kind == Kind::Error).count() as u64 + dropped;
        let _ = writeln!(out, "\ntotals");
        let calls = read(&self.stats.get.calls) + read(&self.stats.post.calls);
        let _ = writeln!(
            out,
            "  calls {calls}, errors {errors}, faults {}",
            self.faults
        );
        method_line(&mut out, "GET ", &self.stats.get);
        method_line(&mut out, "POST", &self.stats.post);
        let _ = writeln!(
            out,
            "  convergence after the faults (over at {} ms): {}",
            self.faults_over_ms,
            self.convergence
                .map_or("not reached".to_owned(), |ms| format!("{ms} ms"))
        );
        let rejoins: Vec<String> = self
            .rejoin_ms
            .iter()
            .map(|ms| ms.map_or("not reached".to_owned(), |ms| format!("{ms} ms")))
            .collect();
        let _ = writeln!(
            out,
            "  registry restarts, time until the three nodes agree: {}",
            if rejoins.is_empty() {
                "none".to_owned()
            } else {
                rejoins.join(", ")
            }
        );
        let (a, b) = (self.start_sample, self.end_sample);
        let _ = writeln!(
            out,
            "  resources start -> end: RSS {} -> {} KiB, live heap {} -> {} KiB, fds {} -> {}, tokio tasks {} -> {}",
            a.rss_kib, b.rss_kib, a.heap_kib, b.heap_kib, a.fds, b.fds, a.tasks, b.tasks
        );
        for line in &self.counters {
            let _ = writeln!(out, "  balancer {line}");
        }
        let _ = writeln!(out, "\njournal (ms since start)");
        for entry in &entries {
            let _ = writeln!(out, "{}", journal::line(entry));
        }
        if dropped > 0 {
            let _ = writeln!(out, "... and {dropped} more entries, not kept");
        }
        let verdict = if self.passed() { "PASS" } else { "FAIL" };
        let _ = writeln!(out, "\nsoak {verdict}");
        out
    }
}

fn method_line(out: &mut String, name: &str, stats: &MethodStats) {
    let _ = writeln!(
        out,
        "  {name} calls {}, ok {}, failed {}, slowest success {} ms",
        read(&stats.calls),
        read(&stats.ok),
        read(&stats.failed),
        read(&stats.slowest_ms)
    );
}
