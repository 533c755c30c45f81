//! The checks and the report: each check PASS or FAIL with its numbers, then totals, then the
//! journal of every fault and failed call.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::journal::{self, Journal, Kind};
use crate::load::{MethodStats, Stats};
use crate::resources::Sample;
use crate::settings::{self, drift, read, Phases, Settings, CONVERGENCE_BOUND, RESOURCE_TOLERANCE};

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

/// What a run saw.
pub(crate) struct Outcome {
    pub(crate) settings: Settings,
    pub(crate) phases: Phases,
    pub(crate) stats: Arc<Stats>,
    /// POST keys executed more than once, with their counts.
    pub(crate) duplicates: Vec<(usize, u8)>,
    pub(crate) executed_posts: usize,
    pub(crate) foreign_keys: u64,
    pub(crate) faults: u64,
    pub(crate) faults_over_ms: u64,
    /// Time from the end of the faults until the registries agreed with the fleet.
    pub(crate) convergence: Option<u64>,
    /// For each registry restart, the time until the three nodes agreed.
    pub(crate) rejoin_ms: Vec<Option<u64>>,
    pub(crate) start_sample: Sample,
    pub(crate) end_sample: Sample,
    /// The highest RSS read under load in the run's first half, in KiB.
    pub(crate) first_half_rss_kib: u64,
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
            name: "no POST executed twice",
            pass: self.duplicates.is_empty() && self.foreign_keys == 0,
            detail: format!(
                "{} POSTs, {} keys executed, {} executed more than once (at most {worst} times){}{}",
                read(&self.stats.post.calls),
                self.executed_posts,
                self.duplicates.len(),
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
        // A leak shows in the bytes still allocated, the fds and the tasks. RSS also keeps
        // what the allocator holds after a peak, so it must level off instead: end within
        // the tolerance of the highest reading of the run's first half (or of the start).
        let rss_plateau = start.rss_kib.max(self.first_half_rss_kib);
        let drifts = [
            ("live heap", start.heap_kib, end.heap_kib, " KiB"),
            ("fds", start.fds, end.fds, ""),
            ("tasks", start.tasks, end.tasks, ""),
        ];
        // One-sided: ending below the start is no leak.
        let pass = drifts
            .iter()
            .all(|&(_, s, e, _)| drift(s, e) <= RESOURCE_TOLERANCE)
            && drift(rss_plateau, end.rss_kib) <= RESOURCE_TOLERANCE;
        self.checks.push(Check {
            name: "no leak: live heap, fds and tasks back to at most 10 % above the start, RSS levelled off",
            pass,
            detail: format!(
                "{}; RSS {} KiB at the start, at most {} KiB in the first half, {} KiB at the end ({:+.1} % over the first half, {:+.1} % over the start)",
                drifts
                    .iter()
                    .map(|&(name, s, e, unit)| {
                        format!(
                            "{name} {s}{unit} -> {e}{unit} ({:+.1} %)",
                            drift(s, e) * 100.0
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                start.rss_kib,
                self.first_half_rss_kib,
                end.rss_kib,
                drift(rss_plateau, end.rss_kib) * 100.0,
                drift(start.rss_kib, end.rss_kib) * 100.0
            ),
        });
        self
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
