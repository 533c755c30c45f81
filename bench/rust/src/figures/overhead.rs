//! The `overhead` benchmark's lines and table: one line per run, concurrency and client, each a
//! closed loop of its own for a fixed time.

use std::fmt;

use super::goals::{Checks, Target};
use super::spread::{runs_note, Spread};
use super::text::{micros_after, number_after};
use super::{Block, Error, RawFile, Result, Summary};
use crate::per_call::Variant;
use crate::stats::{format_us, median};
use crate::table::Table;

/// What one client measured in one run at one concurrency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Which run, from 1.
    pub run: usize,
    /// Callers.
    pub concurrency: usize,
    /// Which client.
    pub variant: Variant,
    /// Successful calls per second.
    pub rps: f64,
    /// Median latency, in microseconds.
    pub p50_us: f64,
    /// 99th percentile, in microseconds.
    pub p99_us: f64,
    /// Failed calls.
    pub errors: u64,
}

/// `  run 1 c=16  feign, fixed URL   43457 req/s  p50 324 µs  p99 792 µs  errors 0`.
impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "  run {} c={:<3} {:<28} {:>9.0} req/s  p50 {:>9}  p99 {:>9}  errors {}",
            self.run,
            self.concurrency,
            self.variant.label(),
            self.rps,
            format_us(self.p50_us),
            format_us(self.p99_us),
            self.errors
        )
    }
}

impl Measured {
    /// Reads a line as [`Display`](fmt::Display) writes it.
    pub fn parse(line: &str) -> Option<Measured> {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"run") {
            return None;
        }
        let run = words.get(1)?.parse().ok()?;
        let concurrency = words.get(2)?.strip_prefix("c=")?.parse().ok()?;
        let rate_at = words.iter().position(|word| *word == "req/s")?;
        let label = words.get(3..rate_at.checked_sub(1)?)?.join(" ");
        let variant = Variant::ALL.into_iter().find(|v| v.label() == label)?;
        Some(Measured {
            run,
            concurrency,
            variant,
            rps: words.get(rate_at - 1)?.parse().ok()?,
            p50_us: micros_after(line, "p50")?,
            p99_us: micros_after(line, "p99")?,
            errors: number_after(line, "errors")? as u64,
        })
    }
}

/// Every line of one run of `overhead`.
pub fn read(file: &RawFile) -> Result<Vec<Measured>> {
    let measured: Vec<Measured> = file.lines().filter_map(Measured::parse).collect();
    if measured.is_empty() {
        return Err(Error::new(format!("{}: no `run` line", file.name())));
    }
    Ok(measured)
}

/// The goals against raw reqwest on the same ports.
fn goal(variant: Variant) -> Option<f64> {
    match variant {
        Variant::FeignFixed => Some(0.97),
        Variant::FeignEureka => Some(0.95),
        _ => None,
    }
}

/// Requests/s, latency and the ratio of requests/s to the baseline's within a run.
pub fn block(file: &RawFile) -> Result<Block> {
    Ok(summary(&read(file)?)
        .with_setup(file, "overhead: ")
        .into_block(&[file]))
}

/// [`block`] of lines already read.
pub fn summary(measured: &[Measured]) -> Summary {
    let mut concurrencies: Vec<usize> = Vec::new();
    for m in measured {
        if !concurrencies.contains(&m.concurrency) {
            concurrencies.push(m.concurrency);
        }
    }
    let mut table = Table::new([
        "concurrency",
        "client",
        "req/s",
        "p50",
        "p99",
        "ratio to baseline",
        "goal",
        "errors",
    ])
    .text_columns(2);
    let mut checks = Checks::default();
    for &concurrency in &concurrencies {
        for variant in Variant::ALL {
            let of = |v: Variant| {
                measured
                    .iter()
                    .filter(move |m| m.concurrency == concurrency && m.variant == v)
            };
            let own: Vec<&Measured> = of(variant).collect();
            if own.is_empty() {
                continue;
            }
            let baseline = variant.baseline();
            let ratio = (baseline != variant)
                .then(|| {
                    Spread::of(own.iter().filter_map(|m| {
                        let base = of(baseline).find(|b| b.run == m.run)?;
                        Some(m.rps / base.rps)
                    }))
                })
                .flatten();
            let verdict = match (goal(variant), ratio) {
                (Some(goal), Some(ratio)) => checks.add(
                    format!(
                        "requests/s in a closed loop on a shared machine, {} ÷ {}",
                        variant.label(),
                        baseline.label()
                    ),
                    Target::AtLeast(goal),
                    ratio.median,
                    three,
                ),
                _ => "—".to_owned(),
            };
            table.row([
                concurrency.to_string(),
                variant.label().to_owned(),
                format!("{:.0}", median(own.iter().map(|m| m.rps))),
                format_us(median(own.iter().map(|m| m.p50_us))),
                format_us(median(own.iter().map(|m| m.p99_us))),
                ratio.map_or("—".to_owned(), |r| r.show(three)),
                verdict,
                own.iter().map(|m| m.errors).sum::<u64>().to_string(),
            ]);
        }
    }
    let runs = measured.iter().map(|m| m.run).max().unwrap_or(0);
    let note = format!(
        "{} The clients' order rotates each run; the ratio of requests/s is taken within a run. \
         Balanced clients are held against raw reqwest calling the same three ports in turn, \
         the fixed URL against raw reqwest on one port.",
        runs_note(runs)
    );
    let goals = checks.goals();
    Summary::new(table, note).with_goals(goals)
}

fn three(value: f64) -> String {
    format!("{value:.3}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_printed() {
        let line = "  run 1 c=16  feign, fixed URL               43457 req/s  p50    324 µs  p99    792 µs  errors 0";
        let measured = Measured::parse(line).unwrap();
        assert_eq!(measured.variant, Variant::FeignFixed);
        assert_eq!(
            (measured.rps, measured.p50_us, measured.p99_us),
            (43457.0, 324.0, 792.0)
        );
        assert_eq!(Measured::parse(&measured.to_string()), Some(measured));
        assert_eq!(
            Measured::parse("  run 1 c=16  nobody 5 req/s p50 1 µs p99 1 µs errors 0"),
            None
        );
    }

    #[test]
    fn the_ratio_is_taken_within_each_run() {
        let file = RawFile::from_text(
            "o.txt",
            "  run 1 c=1 raw reqwest 100 req/s p50 10 µs p99 20 µs errors 0\n\
             run 1 c=1 feign, fixed URL 90 req/s p50 11 µs p99 22 µs errors 0\n\
             run 2 c=1 feign, fixed URL 100 req/s p50 11 µs p99 22 µs errors 0\n\
             run 2 c=1 raw reqwest 200 req/s p50 10 µs p99 20 µs errors 0\n"
                .to_owned(),
        );
        let block = block(&file).unwrap();
        // 0.9 and 0.5 within the runs; the medians' ratio would be 95/150.
        assert!(
            block.markdown.contains("0.700 (0.500–0.900)"),
            "{}",
            block.markdown
        );
        assert!(!block.goals[0].met);
    }
}
