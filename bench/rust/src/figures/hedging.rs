//! The `hedging` benchmark's lines and tables: per run, scenario (the slow instance delays one
//! call in N of its own) and client, the latency of the measured calls and what hedging cost.

use std::fmt;

use super::goals::{Checks, Target};
use super::spread::{runs_note, show, show_median};
use super::text::{micros, micros_after, number_after};
use super::{Block, Error, RawFile, Result, Spread, Summary};
use crate::stats::format_us;
use crate::table::Table;

/// One client's run in one scenario.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Which run, from 1.
    pub run: usize,
    /// The slow instance delays one of every this many of its calls.
    pub one_in: u64,
    /// The hedge delay in µs; `None` without hedging.
    pub delay_us: Option<f64>,
    /// p50, µs.
    pub p50_us: f64,
    /// p99, µs.
    pub p99_us: f64,
    /// p99.9, µs.
    pub p999_us: f64,
    /// The slowest call, µs.
    pub max_us: f64,
    /// Balancer picks per call.
    pub picks_per_call: f64,
    /// Picks beyond one per call that were not retries.
    pub hedges: u64,
    /// Requests the servers received beyond one per call.
    pub extra: u64,
    /// Hedges the retry budget refused.
    pub refused: u64,
    /// Failed calls.
    pub errors: u64,
    /// Calls measured; runs before it was printed give it once, in their caption.
    pub calls: Option<u64>,
}

/// `no hedging` or `hedge after 1.00 ms`.
fn label(delay_us: Option<f64>) -> String {
    delay_us.map_or_else(
        || "no hedging".to_owned(),
        |us| format!("hedge after {}", format_us(us)),
    )
}

/// `run 1 slow 1 in 10, hedge after 1.00 ms: p50 218 µs, p99 14.18 ms, ..., errors 0, calls 20000`.
impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "run {} slow 1 in {}, {}: p50 {}, p99 {}, p99.9 {}, max {}, picks/call {:.4}, hedges {}, extra at servers {}, refused by the budget {}, errors {}",
            self.run,
            self.one_in,
            label(self.delay_us),
            format_us(self.p50_us),
            format_us(self.p99_us),
            format_us(self.p999_us),
            format_us(self.max_us),
            self.picks_per_call,
            self.hedges,
            self.extra,
            self.refused,
            self.errors
        )?;
        if let Some(calls) = self.calls {
            write!(f, ", calls {calls}")?;
        }
        Ok(())
    }
}

impl Measured {
    /// Reads a line as [`Display`](fmt::Display) writes it.
    pub fn parse(line: &str) -> Option<Measured> {
        let rest = line.strip_prefix("run ")?;
        let (run, rest) = rest.split_once(" slow 1 in ")?;
        let (one_in, rest) = rest.split_once(", ")?;
        let (variant, figures) = rest.split_once(": ")?;
        let delay_us = match variant {
            "no hedging" => None,
            _ => {
                let (value, unit) = variant.strip_prefix("hedge after ")?.split_once(' ')?;
                Some(micros(value, unit)?)
            }
        };
        let count = |label: &str| number_after(figures, label).map(|v| v as u64);
        Some(Measured {
            run: run.parse().ok()?,
            one_in: one_in.parse().ok()?,
            delay_us,
            p50_us: micros_after(figures, "p50")?,
            p99_us: micros_after(figures, "p99")?,
            p999_us: micros_after(figures, "p99.9")?,
            max_us: micros_after(figures, "max")?,
            picks_per_call: number_after(figures, "picks/call")?,
            hedges: count("hedges")?,
            extra: count("extra at servers")?,
            refused: count("refused by the budget")?,
            errors: count("errors")?,
            calls: count("calls"),
        })
    }

    fn share(&self, count: u64) -> Option<f64> {
        Some(100.0 * count as f64 / self.calls? as f64)
    }
}

/// Every line of one run of `hedging`, with the calls per run from the caption where the lines
/// do not give them, and the number of instances the caption names.
pub fn read(file: &RawFile) -> Result<(Vec<Measured>, Option<u64>)> {
    let caption_number = |after: &str| {
        file.lines().find_map(|line| {
            let (before, _) = line.split_once(after)?;
            before
                .rsplit([' ', ','])
                .find(|w| !w.is_empty())?
                .parse()
                .ok()
        })
    };
    let calls = caption_number(" calls per variant and run");
    let instances = caption_number(" instances answering");
    let measured: Vec<Measured> = file
        .lines()
        .filter_map(Measured::parse)
        .map(|m| Measured {
            calls: m.calls.or(calls),
            ..m
        })
        .collect();
    if measured.is_empty() {
        return Err(Error::new(format!("{}: no `run` line", file.name())));
    }
    Ok((measured, instances))
}

/// One table per scenario.
pub fn block(file: &RawFile) -> Result<Block> {
    let (measured, instances) = read(file)?;
    Ok(summary(&measured, instances)
        .with_setup(file, " instances answering in ")
        .into_block(&[file]))
}

/// [`block`] of lines already read; `instances` behind the balancer, if known.
pub fn summary(measured: &[Measured], instances: Option<u64>) -> Summary {
    let mut scenarios: Vec<u64> = Vec::new();
    let mut delays: Vec<Option<f64>> = vec![None];
    for m in measured {
        if !scenarios.contains(&m.one_in) {
            scenarios.push(m.one_in);
        }
        if !delays.contains(&m.delay_us) {
            delays.push(m.delay_us);
        }
    }
    let mut checks = Checks::default();
    let mut text = String::new();
    for &one_in in &scenarios {
        let share = instances.map_or_else(String::new, |n| {
            format!(
                " ({:.1} % of all calls)",
                100.0 / (one_in * n.max(1)) as f64
            )
        });
        text.push_str(&format!(
            "The slow instance delays 1 call in {one_in} of its own{share}:\n\n"
        ));
        let mut table = Table::new([
            "client",
            "p50",
            "p99",
            "p99.9",
            "max",
            "p99 ÷ p50",
            "p99 ÷ p99 without hedging",
            "balancer picks per call",
            "hedges",
            "extra requests at the servers",
            "hedges refused by the retry budget",
            "errors, all runs",
        ]);
        let of = |delay: Option<f64>| {
            measured
                .iter()
                .filter(move |m| m.one_in == one_in && m.delay_us == delay)
        };
        let mut best_hedged: Option<f64> = None;
        for &delay in &delays {
            let own: Vec<&Measured> = of(delay).collect();
            if own.is_empty() {
                continue;
            }
            let tail = own.iter().map(|m| m.p99_us / m.p50_us.max(1.0));
            if delay.is_some() {
                let median = Spread::of(tail.clone()).map(|s| s.median);
                best_hedged = match (best_hedged, median) {
                    (Some(best), Some(this)) => Some(best.min(this)),
                    (best, this) => best.or(this),
                };
            }
            let against_unhedged = own.iter().filter_map(|m| {
                let unhedged = of(None).find(|u| u.run == m.run)?;
                Some(m.p99_us / unhedged.p99_us.max(1.0))
            });
            let share = |count: fn(&Measured) -> u64| {
                show_median(own.iter().filter_map(|m| m.share(count(m))), |v| {
                    format!("{v:.2} %")
                })
            };
            table.row([
                label(delay),
                show_median(own.iter().map(|m| m.p50_us), format_us),
                show(own.iter().map(|m| m.p99_us), format_us),
                show_median(own.iter().map(|m| m.p999_us), format_us),
                show_median(own.iter().map(|m| m.max_us), format_us),
                show(tail, |v| format!("{v:.0}")),
                show(against_unhedged, |v| format!("{v:.2}")),
                show_median(own.iter().map(|m| m.picks_per_call), |v| format!("{v:.4}")),
                share(|m| m.hedges),
                share(|m| m.extra),
                share(|m| m.refused),
                own.iter().map(|m| m.errors).sum::<u64>().to_string(),
            ]);
        }
        text.push_str(&table.to_string());
        text.push('\n');
        if let Some(best) = best_hedged {
            checks.add(
                "p99 ÷ p50 with hedging, the best delay, per slow share".to_owned(),
                Target::AtMost(2.0),
                best,
                |v| format!("{v:.0}"),
            );
        }
    }
    let runs = measured.iter().map(|m| m.run).max().unwrap_or(0);
    Summary::new(
        text.trim_end().to_owned() + "\n",
        format!(
            "{} Ratios are taken within a run. Hedges are the balancer's picks beyond one per \
             call that were not retries; extra requests are what the servers received beyond \
             one per call; both as a share of the calls.",
            runs_note(runs)
        ),
    )
    .with_goals(checks.goals())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_printed() {
        let line = "run 3 slow 1 in 10, hedge after 10.00 ms: p50 202 µs, p99 12.20 ms, p99.9 23.20 ms, max 27.67 ms, picks/call 1.0229, hedges 458, extra at servers 448, refused by the budget 0, errors 0";
        let measured = Measured::parse(line).unwrap();
        assert_eq!(measured.delay_us, Some(10_000.0));
        assert_eq!(
            (measured.hedges, measured.extra, measured.calls),
            (458, 448, None)
        );
        assert_eq!(measured.to_string(), line);
        let counted = Measured {
            calls: Some(20_000),
            ..measured
        };
        assert_eq!(Measured::parse(&counted.to_string()), Some(counted));
        assert_eq!(counted.share(458), Some(2.29));
    }
}
