//! The `vs-java` benchmark's lines and tables: per run and concurrency, one line for each client
//! process (feign-rs and Spring, in alternating order) and their ratios within the run.

use std::fmt;

use super::goals::{Checks, Target};
use super::spread::{runs_note, Spread};
use super::text::{micros_after, number_after};
use super::{Block, Error, RawFile, Result, Summary};
use crate::stats::{format_us, median};
use crate::table::Table;

/// The two clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// feign + load balancer.
    FeignRs,
    /// Spring Cloud OpenFeign + LoadBalancer (`bench/java/`).
    Spring,
}

impl Side {
    /// The short name in the run lines.
    pub fn key(self) -> &'static str {
        match self {
            Side::FeignRs => "feign-rs",
            Side::Spring => "Spring",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Side::FeignRs => "feign-rs (feign + LB)",
            Side::Spring => "Spring OpenFeign + LB",
        }
    }
}

/// What a client process reports of its measured calls: `PREFIX key=value ...`, as
/// `bench/java/README.md` specifies for both sides.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Report {
    /// Calls per second.
    pub rps: f64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// `VmRSS` after the run, KiB.
    pub rss_kb: f64,
    /// `VmHWM`, KiB.
    pub peak_rss_kb: f64,
    /// Failed calls; `None` in runs that did not print them.
    pub errors: Option<f64>,
}

impl Report {
    /// The report on the line of `output` that starts with `prefix`.
    pub fn parse(output: &str, prefix: &str) -> Option<Report> {
        let line = output.lines().find(|line| line.starts_with(prefix))?;
        let field = |name: &str| super::text::number(line, name);
        Some(Report {
            rps: field("rps")?,
            p50_us: field("p50_us")?,
            p99_us: field("p99_us")?,
            rss_kb: field("rss_kb")?,
            peak_rss_kb: field("peak_rss_kb")?,
            errors: Some(field("errors")?),
        })
    }
}

/// One client process of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Which run, from 1.
    pub run: usize,
    /// Callers.
    pub concurrency: usize,
    /// Which client.
    pub side: Side,
    /// What it reported.
    pub report: Report,
}

/// `  run 1 c=16  feign-rs  52285 req/s  p50 296 µs  p99 586 µs  rss 8.9 MiB  peak 8.9 MiB  errors 0`.
impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.report;
        write!(
            f,
            "  run {} c={:<3} {:<9} {:>8.0} req/s  p50 {:>9}  p99 {:>9}  rss {:>9}  peak {:>9}",
            self.run,
            self.concurrency,
            self.side.key(),
            r.rps,
            format_us(r.p50_us),
            format_us(r.p99_us),
            mib(r.rss_kb),
            mib(r.peak_rss_kb)
        )?;
        if let Some(errors) = r.errors {
            write!(f, "  errors {errors}")?;
        }
        Ok(())
    }
}

impl Measured {
    /// Reads a line as [`Display`](fmt::Display) writes it (older runs had no errors).
    pub fn parse(line: &str) -> Option<Measured> {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"run") {
            return None;
        }
        let side = match *words.get(3)? {
            "feign-rs" => Side::FeignRs,
            "Spring" => Side::Spring,
            _ => return None,
        };
        let mib_after = |label: &str| -> Option<f64> {
            let at = words.iter().position(|word| *word == label)?;
            (words.get(at + 2) == Some(&"MiB"))
                .then(|| words.get(at + 1)?.parse::<f64>().ok())
                .flatten()
                .map(|mib| mib * 1024.0)
        };
        Some(Measured {
            run: words.get(1)?.parse().ok()?,
            concurrency: words.get(2)?.strip_prefix("c=")?.parse().ok()?,
            side,
            report: Report {
                rps: words.get(4)?.parse().ok()?,
                p50_us: micros_after(line, "p50")?,
                p99_us: micros_after(line, "p99")?,
                rss_kb: mib_after("rss")?,
                peak_rss_kb: mib_after("peak")?,
                errors: number_after(line, "errors"),
            },
        })
    }
}

fn mib(kb: f64) -> String {
    format!("{:.1} MiB", kb / 1024.0)
}

/// Every client line of one run of `vs-java`.
pub fn read(file: &RawFile) -> Result<Vec<Measured>> {
    let measured: Vec<Measured> = file.lines().filter_map(Measured::parse).collect();
    if measured.is_empty() {
        return Err(Error::new(format!("{}: no client line", file.name())));
    }
    Ok(measured)
}

fn concurrencies(measured: &[Measured]) -> Vec<usize> {
    let mut seen = Vec::new();
    for m in measured {
        if !seen.contains(&m.concurrency) {
            seen.push(m.concurrency);
        }
    }
    seen
}

fn runs(measured: &[Measured]) -> usize {
    measured.iter().map(|m| m.run).max().unwrap_or(0)
}

/// Each client's figures, medians over the runs.
pub fn clients(file: &RawFile) -> Result<Block> {
    Ok(clients_of(&read(file)?)
        .with_setup(file, "vs-java: ")
        .into_block(&[file]))
}

/// [`clients`] of lines already read.
pub fn clients_of(measured: &[Measured]) -> Summary {
    let mut table = Table::new([
        "concurrency",
        "client",
        "req/s",
        "p50",
        "p99",
        "RSS after",
        "peak RSS",
        "errors",
    ])
    .text_columns(2);
    for concurrency in concurrencies(measured) {
        for side in [Side::FeignRs, Side::Spring] {
            let own: Vec<&Report> = measured
                .iter()
                .filter(|m| m.concurrency == concurrency && m.side == side)
                .map(|m| &m.report)
                .collect();
            let errors: Option<f64> = own.iter().map(|r| r.errors).sum();
            table.row([
                concurrency.to_string(),
                side.label().to_owned(),
                format!("{:.0}", median(own.iter().map(|r| r.rps))),
                format_us(median(own.iter().map(|r| r.p50_us))),
                format_us(median(own.iter().map(|r| r.p99_us))),
                mib(median(own.iter().map(|r| r.rss_kb))),
                mib(median(own.iter().map(|r| r.peak_rss_kb))),
                errors.map_or("not recorded".to_owned(), |e| format!("{e:.0}")),
            ]);
        }
    }
    Summary::new(
        table,
        format!(
            "{} The two clients run one after the other in their own processes, the order \
             alternating between runs.",
            runs_note(runs(measured))
        ),
    )
}

/// feign-rs over Spring, requests/s and peak memory, within each run.
pub fn ratios(file: &RawFile) -> Result<Block> {
    Ok(ratios_of(&read(file)?).into_block(&[file]))
}

/// [`ratios`] of lines already read.
pub fn ratios_of(measured: &[Measured]) -> Summary {
    let mut table = Table::new([
        "concurrency",
        "req/s feign-rs ÷ Spring",
        "goal",
        "peak RSS feign-rs ÷ Spring",
        "goal",
    ]);
    let mut checks = Checks::default();
    for concurrency in concurrencies(measured) {
        let per_run = |metric: fn(&Report) -> f64| {
            Spread::of(
                measured
                    .iter()
                    .filter(|m| m.concurrency == concurrency && m.side == Side::FeignRs)
                    .filter_map(|rust| {
                        let java = measured.iter().find(|m| {
                            m.concurrency == concurrency
                                && m.run == rust.run
                                && m.side == Side::Spring
                        })?;
                        Some(metric(&rust.report) / metric(&java.report))
                    }),
            )
        };
        let (Some(speed), Some(memory)) = (per_run(|r| r.rps), per_run(|r| r.peak_rss_kb)) else {
            continue;
        };
        table.row([
            concurrency.to_string(),
            speed.show(times),
            checks.add(
                "requests/s, feign-rs ÷ Spring Cloud OpenFeign + LoadBalancer".to_owned(),
                Target::AtLeast(3.0),
                speed.median,
                times,
            ),
            memory.show(three),
            checks.add(
                "peak memory, feign-rs ÷ Spring Cloud OpenFeign + LoadBalancer".to_owned(),
                Target::AtMost(0.10),
                memory.median,
                three,
            ),
        ]);
    }
    Summary::new(
        table,
        format!(
            "Ratios taken within each run, median (min–max) over {} runs.",
            runs(measured)
        ),
    )
    .with_goals(checks.goals())
}

fn times(value: f64) -> String {
    format!("{value:.2}×")
}

fn three(value: f64) -> String {
    format!("{value:.3}")
}
