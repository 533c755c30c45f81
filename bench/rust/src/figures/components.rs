//! The crates' own benches: criterion's estimates (feign-core's `pipeline`, `resilience` and
//! `template`, feign-lb's `pick`), feign-lb's `slow_backend` scenario runner and the Eureka
//! client's `client_registry` CPU times. Their binaries live in the crates; this module only
//! reads what they print.

use std::time::Duration;

use super::goals::{Checks, Target};
use super::resilience::POLICIES;
use super::spread::{runs_note, show, Spread};
use super::text::{debug_duration, micros};
use super::{Block, Error, RawFile, Result, Summary};
use crate::stats::format_us;
use crate::table::Table;

/// One criterion benchmark's estimates, in nanoseconds: the low and high ends of its
/// confidence interval and its point estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The benchmark's id, `group/name/parameter`.
    pub id: String,
    /// Low end, ns.
    pub low: f64,
    /// Point estimate, ns.
    pub estimate: f64,
    /// High end, ns.
    pub high: f64,
}

/// Every `time:` line of a criterion output, with the id written before it (on its line or
/// the line above).
pub fn estimates(file: &RawFile) -> Vec<Estimate> {
    let mut found = Vec::new();
    let mut last_id: Option<&str> = None;
    for line in file.lines() {
        let Some((before, after)) = line.split_once("time:") else {
            let trimmed = line.trim();
            if !trimmed.is_empty()
                && !line.starts_with(' ')
                && !trimmed.contains(' ')
                && trimmed.contains('/')
            {
                last_id = Some(trimmed);
            }
            continue;
        };
        let id = match before.trim() {
            "" => last_id,
            id => Some(id),
        };
        let words: Vec<&str> = after
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split_whitespace()
            .collect();
        let ns = |at: usize| Some(micros(words.get(at)?, words.get(at + 1)?)? * 1_000.0);
        if let (Some(id), Some(low), Some(estimate), Some(high)) = (id, ns(0), ns(2), ns(4)) {
            found.push(Estimate {
                id: id.to_owned(),
                low,
                estimate,
                high,
            });
        }
        last_id = None;
    }
    found
}

/// Nanoseconds as criterion writes them: `317.06 ns`, `1.2194 µs`, `84.207 µs`, `42.3 ms`.
fn time(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.1} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2} µs", ns / 1_000.0)
    } else {
        format!("{:.2} ms", ns / 1_000_000.0)
    }
}

/// The goals of feign-core's benches: what a call costs the framework against a no-op
/// transport, and how fast an open breaker refuses.
const CORE_GOALS: [(&str, &str, f64); 2] = [
    (
        "pipeline/feign_unit_call_noop_service",
        "a call's time in the framework, against a no-op transport",
        2_000.0,
    ),
    (
        "resilience/open_breaker_rejects",
        "a call an open circuit breaker refuses, its whole time",
        1_000_000.0,
    ),
];

/// Every estimate of one criterion run, in the order run.
pub fn criterion(file: &RawFile) -> Result<Block> {
    let estimates = estimates(file);
    if estimates.is_empty() {
        return Err(Error::new(format!(
            "{}: no criterion `time:` line",
            file.name()
        )));
    }
    let mut table = Table::new(["bench", "low", "estimate", "high"]);
    let mut checks = Checks::default();
    for estimate in &estimates {
        table.row([
            format!("`{}`", estimate.id),
            time(estimate.low),
            time(estimate.estimate),
            time(estimate.high),
        ]);
        if let Some((_, what, goal)) = CORE_GOALS.iter().find(|(id, _, _)| *id == estimate.id) {
            checks.add(
                (*what).to_owned(),
                Target::Below(*goal),
                estimate.estimate,
                time,
            );
        }
    }
    Ok(Summary::new(
        table,
        "One run of each bench: criterion's estimate of the time per iteration and its \
         confidence interval, wall time.",
    )
    .with_goals(checks.goals())
    .into_block(&[file]))
}

/// feign-lb's `pick` bench over several runs: the pick alone, with its completion report,
/// and the report's own cost (pick − choose within a run).
pub fn pick(files: &[RawFile]) -> Result<Block> {
    let runs: Vec<Vec<Estimate>> = files.iter().map(estimates).collect();
    if runs.iter().any(Vec::is_empty) {
        return Err(Error::new("a run without criterion `time:` lines"));
    }
    let mut sizes: Vec<&str> = Vec::new();
    for estimate in runs.iter().flatten() {
        if let Some(size) = estimate
            .id
            .strip_prefix("choose/")
            .and_then(|id| id.rsplit('/').next())
        {
            if !sizes.contains(&size) {
                sizes.push(size);
            }
        }
    }
    let mut table = Table::new([
        "policy",
        "instances",
        "choose (the pick alone)",
        "pick + completion report",
        "the report (difference within a run)",
    ]);
    let mut checks = Checks::default();
    let per_run = |id: &str| -> Vec<Option<f64>> {
        runs.iter()
            .map(|run| run.iter().find(|e| e.id == id).map(|e| e.estimate))
            .collect()
    };
    for policy in [
        "RoundRobin",
        "Random",
        "Weighted",
        "LeastRequest",
        "PeakEwma",
    ] {
        for size in &sizes {
            let choose = per_run(&format!("choose/{policy}/{size}"));
            let pick = per_run(&format!("pick/{policy}/{size}"));
            if choose.iter().all(Option::is_none) {
                continue;
            }
            let report = choose
                .iter()
                .zip(&pick)
                .filter_map(|(c, p)| Some((*p)? - (*c)?));
            let report = Spread::of(report);
            let choose = Spread::of(choose.into_iter().flatten());
            if let (Some(choose), Ok(count)) = (choose, size.parse::<u32>()) {
                if count <= 1_000 {
                    checks.add(
                        "a load-balancer pick, up to 1,000 instances, every policy".to_owned(),
                        Target::Below(100.0),
                        choose.median,
                        time,
                    );
                }
            }
            if let Some(report) = report {
                checks.add(
                    "a pick's completion report, every policy and size".to_owned(),
                    Target::Below(50.0),
                    report.median,
                    time,
                );
            }
            table.row([
                policy.to_owned(),
                (*size).to_owned(),
                choose.map_or("—".to_owned(), |s| s.show(time)),
                show(pick.into_iter().flatten(), time),
                report.map_or("—".to_owned(), |s| s.show(time)),
            ]);
        }
    }
    let references: Vec<&RawFile> = files.iter().collect();
    Ok(Summary::new(
        table,
        format!(
            "{} Criterion's estimate per run; the report is the pick with its report less the \
             pick alone in the same run.",
            runs_note(files.len())
        ),
    )
    .with_goals(checks.goals())
    .into_block(&references))
}

/// One policy's line of feign-lb's `slow_backend` runner.
#[derive(Debug, Clone, PartialEq)]
struct SlowBackend {
    policy: String,
    share: String,
    with: [f64; 3],
    base: [f64; 3],
    times: String,
    errors: String,
}

impl SlowBackend {
    /// `RoundRobin  9.06%  7.3 ms 102.8 ms 103.2 ms | 7.1 ms 7.9 ms 9.9 ms | 13.01x 0`.
    fn parse(line: &str) -> Option<SlowBackend> {
        let mut parts = line.split('|');
        let (head, base, tail) = (parts.next()?, parts.next()?, parts.next()?);
        let head: Vec<&str> = head.split_whitespace().collect();
        let policy = (*head.first()?).to_owned();
        if !POLICIES.contains(&policy.as_str()) {
            return None;
        }
        let three = |words: &[&str]| -> Option<[f64; 3]> {
            let us = |at: usize| micros(words.get(at)?, words.get(at + 1)?);
            Some([us(0)?, us(2)?, us(4)?])
        };
        let base: Vec<&str> = base.split_whitespace().collect();
        let tail: Vec<&str> = tail.split_whitespace().collect();
        Some(SlowBackend {
            policy,
            share: head.get(1)?.replace('%', " %"),
            with: three(head.get(2..)?)?,
            base: three(&base)?,
            times: tail.first()?.replace('x', "×"),
            errors: (*tail.get(1)?).to_owned(),
        })
    }
}

/// feign-lb's `slow_backend` runner: one run per policy, next to a run without the fault.
pub fn slow_backend(file: &RawFile) -> Result<Block> {
    let lines: Vec<SlowBackend> = file.lines().filter_map(SlowBackend::parse).collect();
    if lines.is_empty() {
        return Err(Error::new(format!("{}: no policy line", file.name())));
    }
    let mut table = Table::new([
        "policy",
        "share sent to the slow one",
        "p50",
        "p99",
        "p99.9",
        "p50 without the fault",
        "p99 without",
        "p99.9 without",
        "p99 ÷ p99 without",
        "errors",
    ]);
    for line in lines {
        table.row([
            line.policy,
            line.share,
            format_us(line.with[0]),
            format_us(line.with[1]),
            format_us(line.with[2]),
            format_us(line.base[0]),
            format_us(line.base[1]),
            format_us(line.base[2]),
            line.times,
            line.errors,
        ]);
    }
    Ok(Summary::new(table, runs_note(1)).into_block(&[file]))
}

/// One `client_registry` run's CPU times and memory.
#[derive(Debug, Clone, Default, PartialEq)]
struct RegistryRun {
    after: bool,
    times: Vec<(&'static str, Duration)>,
    mib: Option<f64>,
}

/// What the `cpu time:` line names, and the row each becomes.
const OPERATIONS: [(&str, &str, Option<f64>); 5] = [
    (
        "into an empty cache ",
        "first fetch (parse and swap into an empty cache)",
        Some(25.0),
    ),
    ("all changed ", "every instance changed", Some(25.0)),
    ("unchanged ", "unchanged registry", None),
    ("parse alone ", "parse alone", None),
    ("one-change delta ", "one-change delta", Some(1.0)),
];

/// The runs of a `client_registry` output: one per `memory:` line, or, in a comparison of two
/// builds run in turn, one per `== old run N` / `== new run N` heading.
fn registry_runs(file: &RawFile) -> Vec<RegistryRun> {
    let mut runs: Vec<RegistryRun> = Vec::new();
    let headed = file.lines().any(|line| line.starts_with("== "));
    for line in file.lines() {
        if let Some(build) = line.strip_prefix("== ") {
            runs.push(RegistryRun {
                after: build.starts_with("new"),
                ..RegistryRun::default()
            });
        }
        if let Some((_, rest)) = line.split_once("cache holds about ") {
            if !headed {
                runs.push(RegistryRun {
                    after: true,
                    ..RegistryRun::default()
                });
            }
            if let Some(run) = runs.last_mut() {
                run.mib = rest.split_whitespace().next().and_then(|v| v.parse().ok());
            }
        }
        if let (Some(run), Some((_, rest))) = (runs.last_mut(), line.split_once("cpu time: ")) {
            for (label, _, _) in OPERATIONS {
                let value = rest
                    .split_once(label)
                    .and_then(|(_, v)| v.split([',', ')', ';', ' ']).next())
                    .and_then(debug_duration);
                if let Some(value) = value {
                    run.times.push((label, value));
                }
            }
        }
    }
    runs
}

/// The Eureka client's full fetch: CPU time per operation and the memory a 10,000-instance
/// cache holds, over the runs of the current build, or of two builds run in turn (before and
/// after a change) with their ratio within each pair.
pub fn client_registry(file: &RawFile) -> Result<Block> {
    let runs = registry_runs(file);
    if runs.iter().all(|run| run.times.is_empty()) {
        return Err(Error::new(format!("{}: no `cpu time:` line", file.name())));
    }
    let compared = runs.iter().any(|run| !run.after);
    let mut table = Table::new(if compared {
        vec!["operation", "before", "after", "after ÷ before", "goal"]
    } else {
        vec!["operation", "CPU time", "goal"]
    });
    let mut checks = Checks::default();
    let ms = |v: f64| {
        if v < 1.0 {
            format!("{:.1} µs", v * 1_000.0)
        } else {
            format!("{v:.1} ms")
        }
    };
    let builds = |after: bool| runs.iter().filter(move |run| run.after == after);
    for (label, row, goal) in OPERATIONS {
        let of = |run: &RegistryRun| {
            run.times
                .iter()
                .find(|(l, _)| *l == label)
                .map(|(_, d)| d.as_secs_f64() * 1e3)
        };
        let before: Vec<f64> = builds(false).filter_map(of).collect();
        let after: Vec<f64> = builds(true).filter_map(of).collect();
        let after_spread = Spread::of(after.iter().copied());
        let verdict = match (goal, after_spread) {
            (Some(goal), Some(spread)) => checks.add(
                format!("the Eureka client's CPU time, 10,000 instances: {row}"),
                Target::Below(goal),
                spread.median,
                ms,
            ),
            _ => "—".to_owned(),
        };
        let after = after_spread.map_or("—".to_owned(), |s| s.show(ms));
        table.row(if compared {
            let ratio = before
                .iter()
                .zip(builds(true).filter_map(of))
                .map(|(b, a)| a / b);
            vec![
                row.to_owned(),
                show(before.iter().copied(), ms),
                after,
                show(ratio, |v| format!("{v:.2}")),
                verdict,
            ]
        } else {
            vec![row.to_owned(), after, verdict]
        });
    }
    let memory = |after: bool| {
        show(builds(after).filter_map(|run| run.mib), |v| {
            format!("{v:.1} MiB")
        })
    };
    let label = "memory a 10,000-instance cache holds".to_owned();
    table.row(if compared {
        vec![
            label,
            memory(false),
            memory(true),
            String::new(),
            "—".to_owned(),
        ]
    } else {
        vec![label, memory(true), "—".to_owned()]
    });
    let count = runs.iter().filter(|run| run.after).count();
    let note = if compared {
        format!(
            "CPU time of the bench thread, {count} runs of each build in turn (before, after, \
             before, ...); the ratio is taken within each pair."
        )
    } else {
        format!("CPU time of the bench thread. {}", runs_note(count))
    };
    Ok(Summary::new(table, note)
        .with_goals(checks.goals())
        .into_block(&[file]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criterion_ids_on_their_line_or_the_line_above() {
        let file = RawFile::from_text(
            "c.txt",
            "Benchmarking a/b: Analyzing\na/b\n                        time:   [941.50 ns 943.31 ns 945.62 ns]\n\
             template/one   time:   [1.2187 µs 1.2194 µs 1.2201 µs]\n"
                .to_owned(),
        );
        let found = estimates(&file);
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].id.as_str(), found[0].estimate), ("a/b", 943.31));
        assert_eq!(found[1].id, "template/one");
        assert!((found[1].estimate - 1_219.4).abs() < 1e-6);
    }

    #[test]
    fn client_registry_runs_of_one_build_or_of_two_in_turn() {
        let lines = "memory: a 10,000-instance cache holds about 10.0 MiB (1050 bytes)\n\
                     cpu time: parse and swap of 10,000 instances: into an empty cache 23.2ms, all changed 22.8ms, unchanged 15.1ms (parse alone 20.0ms); one-change delta 15.9µs\n";
        let one = RawFile::from_text("one.txt", format!("{lines}{lines}"));
        let runs = registry_runs(&one);
        assert_eq!(runs.len(), 2);
        assert!(runs.iter().all(|run| run.after && run.times.len() == 5));
        assert_eq!(runs[0].mib, Some(10.0));
        let two = RawFile::from_text(
            "two.txt",
            format!("== old run 1\n{lines}== new run 1\n{lines}"),
        );
        let runs = registry_runs(&two);
        assert_eq!((runs.len(), runs[0].after, runs[1].after), (2, false, true));
        let block = client_registry(&two).unwrap();
        assert!(
            block.markdown.contains(" 1.00 | < 25.0 ms met"),
            "{}",
            block.markdown
        );
        assert!(client_registry(&one)
            .unwrap()
            .markdown
            .contains("| CPU time"));
    }

    #[test]
    fn a_slow_backend_line_reads() {
        let line = SlowBackend::parse(
            "PeakEwma            0.12%     7.1 ms     8.0 ms    10.5 ms |     7.2 ms     8.1 ms     9.8 ms |   0.99x      0",
        )
        .unwrap();
        assert_eq!(line.share, "0.12 %");
        assert_eq!(line.with, [7_100.0, 8_000.0, 10_500.0]);
        assert_eq!((line.times.as_str(), line.errors.as_str()), ("0.99×", "0"));
    }
}
