//! The `lb-resilience` benchmark's lines, tables and charts: per run and policy, a `killed`
//! line (an instance killed mid-traffic, next to the same run without the kill) and a `slow`
//! line (one instance of eleven 20× slower for the middle half); then per scenario and policy
//! a `quantiles` line, the latency of all runs' calls at the percentiles the chart plots.
//!
//! Runs before the policies were interleaved printed fewer figures per line and no quantiles;
//! their tables leave those cells empty and they draw no chart.

use std::fmt;

use super::goals::{Checks, Target};
use super::spread::{runs_note, show, show_median, Spread};
use super::text::{field, micros_after, number, number_after};
use super::{Block, Error, RawFile, Result, Summary};
use crate::chart::latency_percentiles;
use crate::stats::format_us;
use crate::table::Table;

/// Instances in the `slow` scenario, as in feign-lb's runner.
pub const SLOW_INSTANCES: usize = 11;

/// The policies, in table order.
pub const POLICIES: [&str; 4] = ["RoundRobin", "Random", "LeastRequest", "PeakEwma"];

/// One run of one policy with an instance killed, and the same window of its run without.
#[derive(Debug, Clone, PartialEq)]
pub struct Killed {
    /// Which run, from 1.
    pub run: usize,
    /// The balancing policy.
    pub policy: String,
    /// Calls made in the run with the kill.
    pub calls: u64,
    /// Calls that failed in it.
    pub errors: u64,
    /// p50 of the calls due in the second after the kill, µs.
    pub p50_after_us: Option<f64>,
    /// p99 of those calls, µs.
    pub p99_after_us: f64,
    /// The slowest of them, µs.
    pub max_after_us: f64,
    /// p99 of the same second in the run without the kill, µs.
    pub p99_quiet_us: Option<f64>,
    /// p99 of every call of the run with the kill, µs.
    pub p99_whole_us: Option<f64>,
}

/// `killed run=1 policy=RoundRobin calls=4500 errors=0 p50_after_us=... ...`.
impl fmt::Display for Killed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "killed run={} policy={} calls={} errors={} p99_after_us={:.0} max_after_us={:.0}",
            self.run, self.policy, self.calls, self.errors, self.p99_after_us, self.max_after_us,
        )?;
        for (name, value) in [
            ("p50_after_us", self.p50_after_us),
            ("p99_quiet_us", self.p99_quiet_us),
            ("p99_whole_us", self.p99_whole_us),
        ] {
            if let Some(value) = value {
                write!(f, " {name}={value:.0}")?;
            }
        }
        Ok(())
    }
}

impl Killed {
    /// Reads a line as [`Display`](fmt::Display) writes it, or as runs before it did.
    pub fn parse(line: &str) -> Option<Killed> {
        if line.starts_with("killed ") {
            return Some(Killed {
                run: number(line, "run")? as usize,
                policy: field(line, "policy")?.to_owned(),
                calls: number(line, "calls")? as u64,
                errors: number(line, "errors")? as u64,
                p50_after_us: number(line, "p50_after_us"),
                p99_after_us: number(line, "p99_after_us")?,
                max_after_us: number(line, "max_after_us")?,
                p99_quiet_us: number(line, "p99_quiet_us"),
                p99_whole_us: number(line, "p99_whole_us"),
            });
        }
        // `  RoundRobin   run 1 killed: 0 errors of 4500, p99 after kill 7.49 ms, max 9.05 ms`
        let (head, rest) = line.split_once(" killed: ")?;
        let mut words = head.split_whitespace();
        let policy = words.next()?.to_owned();
        let run = match (words.next()?, words.next()?) {
            ("run", run) => run.parse().ok()?,
            _ => return None,
        };
        Some(Killed {
            run,
            policy,
            calls: number_after(rest, "errors of")? as u64,
            errors: rest.split_whitespace().next()?.parse().ok()?,
            p50_after_us: None,
            p99_after_us: micros_after(rest, "kill")?,
            max_after_us: micros_after(rest, "max")?,
            p99_quiet_us: None,
            p99_whole_us: None,
        })
    }
}

/// One run of one policy with a slow instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Slow {
    /// Which run, from 1.
    pub run: usize,
    /// The balancing policy.
    pub policy: String,
    /// The slow instance's share of the calls while it was slow, in percent.
    pub share_percent: f64,
    /// Failed calls.
    pub errors: u64,
    /// p50 of every call, µs.
    pub p50_us: Option<f64>,
    /// p99, µs.
    pub p99_us: f64,
    /// p99.9, µs.
    pub p999_us: f64,
}

/// `slow run=1 policy=RoundRobin share_percent=8.78 errors=0 p99_us=... p999_us=... p50_us=...`.
impl fmt::Display for Slow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "slow run={} policy={} share_percent={:.2} errors={} p99_us={:.0} p999_us={:.0}",
            self.run, self.policy, self.share_percent, self.errors, self.p99_us, self.p999_us,
        )?;
        if let Some(p50) = self.p50_us {
            write!(f, " p50_us={p50:.0}")?;
        }
        Ok(())
    }
}

impl Slow {
    /// Reads a line as [`Display`](fmt::Display) writes it, or as runs before it did.
    pub fn parse(line: &str) -> Option<Slow> {
        if line.starts_with("slow run=") {
            return Some(Slow {
                run: number(line, "run")? as usize,
                policy: field(line, "policy")?.to_owned(),
                share_percent: number(line, "share_percent")?,
                errors: number(line, "errors")? as u64,
                p50_us: number(line, "p50_us"),
                p99_us: number(line, "p99_us")?,
                p999_us: number(line, "p999_us")?,
            });
        }
        // `  RoundRobin   run 1: share 8.78 %, p99 102.70 ms, p99.9 103.24 ms, errors 0`
        let (head, rest) = line.split_once(": share ")?;
        let mut words = head.split_whitespace();
        let policy = words.next()?.to_owned();
        let run = match (words.next()?, words.next()?) {
            ("run", run) => run.parse().ok()?,
            _ => return None,
        };
        Some(Slow {
            run,
            policy,
            share_percent: rest.split_whitespace().next()?.parse().ok()?,
            errors: number_after(rest, "errors")? as u64,
            p50_us: None,
            p99_us: micros_after(rest, "p99")?,
            p999_us: micros_after(rest, "p99.9")?,
        })
    }
}

/// The latency of one scenario's calls under one policy, all runs merged, at each of the
/// percentiles the chart plots ([`crate::chart::quantile_grid`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Quantiles {
    /// `killed` or `slow`.
    pub scenario: String,
    /// The balancing policy.
    pub policy: String,
    /// Microseconds, one per percentile of the grid.
    pub us: Vec<u32>,
}

/// `quantiles scenario=killed policy=RoundRobin us=812,850,...`.
impl fmt::Display for Quantiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let us: Vec<String> = self.us.iter().map(u32::to_string).collect();
        write!(
            f,
            "quantiles scenario={} policy={} us={}",
            self.scenario,
            self.policy,
            us.join(",")
        )
    }
}

impl Quantiles {
    /// Reads a line as [`Display`](fmt::Display) writes it.
    pub fn parse(line: &str) -> Option<Quantiles> {
        if !line.starts_with("quantiles ") {
            return None;
        }
        Some(Quantiles {
            scenario: field(line, "scenario")?.to_owned(),
            policy: field(line, "policy")?.to_owned(),
            us: field(line, "us")?
                .split(',')
                .map(str::parse)
                .collect::<std::result::Result<_, _>>()
                .ok()?,
        })
    }
}

/// Every line of one run of `lb-resilience`.
#[derive(Debug, Clone, Default)]
pub struct Resilience {
    /// The `killed` lines.
    pub killed: Vec<Killed>,
    /// The `slow` lines.
    pub slow: Vec<Slow>,
    /// The `quantiles` lines.
    pub quantiles: Vec<Quantiles>,
}

impl Resilience {
    /// Reads the lines of a raw output.
    pub fn read(file: &RawFile) -> Resilience {
        let mut run = Resilience::default();
        for line in file.lines() {
            if let Some(killed) = Killed::parse(line) {
                run.killed.push(killed);
            } else if let Some(slow) = Slow::parse(line) {
                run.slow.push(slow);
            } else if let Some(quantiles) = Quantiles::parse(line) {
                run.quantiles.push(quantiles);
            }
        }
        run
    }
}

fn signed_latency(us: f64) -> String {
    format!(
        "{}{}",
        if us < 0.0 { "−" } else { "+" },
        format_us(us.abs())
    )
}

/// The kill: errors, latency in the second after it, and its extra p99 within each run.
pub fn killed(file: &RawFile) -> Result<Block> {
    let run = Resilience::read(file);
    if run.killed.is_empty() {
        return Err(Error::new(format!("{}: no `killed` line", file.name())));
    }
    Ok(killed_of(&run.killed)
        .with_setup(file, "killed: ")
        .into_block(&[file]))
}

/// [`killed`] of lines already read.
pub fn killed_of(lines: &[Killed]) -> Summary {
    let mut table = Table::new([
        "policy",
        "errors, all runs (worst run; of calls)",
        "p50 after kill",
        "p99 after kill",
        "slowest call after kill",
        "p99 same window, no kill",
        "extra p99 (within a run)",
        "p99 whole run",
    ]);
    let mut checks = Checks::default();
    let mut all_errors = 0;
    for policy in POLICIES {
        let own: Vec<&Killed> = lines.iter().filter(|k| k.policy == policy).collect();
        if own.is_empty() {
            continue;
        }
        let errors: u64 = own.iter().map(|k| k.errors).sum();
        all_errors += errors;
        table.row([
            policy.to_owned(),
            format!(
                "{errors} (worst {}; of {})",
                own.iter().map(|k| k.errors).max().unwrap_or(0),
                own.iter().map(|k| k.calls).sum::<u64>()
            ),
            show_median(own.iter().filter_map(|k| k.p50_after_us), format_us),
            show(own.iter().map(|k| k.p99_after_us), format_us),
            own.iter()
                .map(|k| k.max_after_us)
                .fold(None, |most: Option<f64>, v| {
                    Some(most.map_or(v, |m| m.max(v)))
                })
                .map_or("—".to_owned(), format_us),
            show_median(own.iter().filter_map(|k| k.p99_quiet_us), format_us),
            show(
                own.iter()
                    .filter_map(|k| Some(k.p99_after_us - k.p99_quiet_us?)),
                signed_latency,
            ),
            show_median(own.iter().filter_map(|k| k.p99_whole_us), format_us),
        ]);
    }
    checks.add(
        "caller errors when an instance is killed mid-traffic, every policy, all runs".to_owned(),
        Target::AtMost(0.0),
        all_errors as f64,
        |v| format!("{v:.0}"),
    );
    let runs = lines.iter().map(|k| k.run).max().unwrap_or(0);
    Summary::new(
        table,
        format!(
            "{} The slowest call is the slowest of all runs. Cells with — were not in this \
             run's output.",
            runs_note(runs)
        ),
    )
    .with_goals(checks.goals())
}

/// The slow instance: its share of the calls and the latency, per policy.
pub fn slow(file: &RawFile) -> Result<Block> {
    let run = Resilience::read(file);
    if run.slow.is_empty() {
        return Err(Error::new(format!("{}: no `slow` line", file.name())));
    }
    Ok(slow_of(&run.slow)
        .with_setup(file, "slow: ")
        .into_block(&[file]))
}

/// [`slow`] of lines already read.
pub fn slow_of(lines: &[Slow]) -> Summary {
    let mut table = Table::new([
        "policy",
        "share sent to the slow one",
        "p50",
        "p99",
        "p99.9",
        "errors, all runs",
    ]);
    let mut checks = Checks::default();
    for policy in POLICIES {
        let own: Vec<&Slow> = lines.iter().filter(|s| s.policy == policy).collect();
        if own.is_empty() {
            continue;
        }
        let share = Spread::of(own.iter().map(|s| s.share_percent));
        if let (Some(share), "PeakEwma") = (share, policy) {
            checks.add(
                "share of calls sent to one instance of 11 while it is 20× slower, Peak-EWMA"
                    .to_owned(),
                Target::AtMost(1.0),
                share.median,
                percent,
            );
        }
        table.row([
            policy.to_owned(),
            share.map_or("—".to_owned(), |s| s.show(percent)),
            show_median(own.iter().filter_map(|s| s.p50_us), format_us),
            show(own.iter().map(|s| s.p99_us), format_us),
            show_median(own.iter().map(|s| s.p999_us), format_us),
            own.iter().map(|s| s.errors).sum::<u64>().to_string(),
        ]);
    }
    let runs = lines.iter().map(|s| s.run).max().unwrap_or(0);
    Summary::new(
        table,
        format!(
            "{} The share is counted while the instance is slow (a fair share is {:.1} %). \
             Cells with — were not in this run's output.",
            runs_note(runs),
            100.0 / SLOW_INSTANCES as f64
        ),
    )
    .with_goals(checks.goals())
}

fn percent(value: f64) -> String {
    format!("{value:.2} %")
}

/// The chart of `scenario` (`killed` or `slow`) from the run's `quantiles` lines, or a line
/// saying the run printed none.
pub fn chart(scenario: &str, file: &RawFile) -> Result<Block> {
    let (title, alt) = match scenario {
        "killed" => (
            "Calls in the second after an instance is killed (3 instances, open loop)",
            "Latency per policy in the second after the kill",
        ),
        "slow" => (
            "Latency per policy, one of 11 instances 20× slower (open loop)",
            "Latency per policy with one slow instance",
        ),
        _ => return Err(Error::new("no such scenario")),
    };
    let quantiles = Resilience::read(file).quantiles;
    let series: Vec<(String, Vec<u32>)> = POLICIES
        .iter()
        .filter_map(|policy| {
            quantiles
                .iter()
                .find(|q| q.scenario == scenario && q.policy == *policy)
                .map(|q| (q.policy.clone(), q.us.clone()))
        })
        .collect();
    if series.is_empty() {
        return Ok(Summary::new(
            "No chart: this run's output holds no latency distribution (runs of `lb-resilience` \
             print one per scenario and policy since the policies were interleaved).\n",
            String::new(),
        )
        .into_block(&[file]));
    }
    let name = format!("resilience-{scenario}.svg");
    let mut block = Summary::new(
        format!("![{alt}](bench/results/{name})\n"),
        "The chart merges the calls of every run.",
    )
    .into_block(&[file]);
    block.chart = Some((name, latency_percentiles(title, &series)));
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back_in_both_forms() {
        let old = Killed::parse(
            "  RoundRobin   run 2 killed: 1 errors of 4500, p99 after kill 7.49 ms, max 9.05 ms",
        )
        .unwrap();
        assert_eq!((old.run, old.errors, old.calls), (2, 1, 4500));
        assert_eq!((old.p99_after_us, old.max_after_us), (7490.0, 9050.0));
        assert_eq!(old.p50_after_us, None);
        let new = Killed {
            p50_after_us: Some(6000.0),
            p99_quiet_us: Some(7000.0),
            p99_whole_us: Some(7100.0),
            ..old
        };
        assert_eq!(Killed::parse(&new.to_string()), Some(new));

        let old = Slow::parse(
            "  PeakEwma     run 3: share 0.08 %, p99 8.32 ms, p99.9 11.45 ms, errors 0",
        )
        .unwrap();
        assert_eq!(
            (old.run, old.share_percent, old.p999_us),
            (3, 0.08, 11_450.0)
        );
        let new = Slow {
            p50_us: Some(7000.0),
            ..old
        };
        assert_eq!(Slow::parse(&new.to_string()), Some(new));

        let quantiles = Quantiles {
            scenario: "slow".into(),
            policy: "Random".into(),
            us: vec![1, 2, 3],
        };
        assert_eq!(Quantiles::parse(&quantiles.to_string()), Some(quantiles));
    }

    #[test]
    fn extra_p99_is_taken_within_each_run() {
        let line = |run, after, quiet| Killed {
            run,
            policy: "Random".into(),
            calls: 10,
            errors: 0,
            p50_after_us: Some(1.0),
            p99_after_us: after,
            max_after_us: after,
            p99_quiet_us: Some(quiet),
            p99_whole_us: Some(1.0),
        };
        let summary = killed_of(&[line(1, 900.0, 1000.0), line(2, 2000.0, 1500.0)]);
        assert!(
            summary.table.contains("+200 µs (−100 µs–+500 µs)"),
            "{}",
            summary.table
        );
        assert!(summary.goals[0].met);
    }
}
