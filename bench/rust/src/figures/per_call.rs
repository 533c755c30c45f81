//! The `per-call` benchmark's lines and tables: one `round` line per client process (CPU time,
//! wall time and allocations of its counted calls) and one `valgrind` line per pair of runs
//! under cachegrind (instructions per call).

use std::fmt;

use super::goals::{Checks, Target};
use super::spread::Spread;
use super::text::number;
use super::{Block, Error, RawFile, Result, Summary};
use crate::per_call::{Sample, Variant};
use crate::stats::median;
use crate::table::Table;

/// One client process of the CPU-time rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Round {
    /// Which round, from 1.
    pub round: usize,
    /// Callers on the client's thread.
    pub concurrency: usize,
    /// Which client.
    pub variant: Variant,
    /// What its counted calls cost.
    pub sample: Sample,
}

/// `round 3 c=16 feign sample calls=...`.
impl fmt::Display for Round {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "round {} c={} {} {}",
            self.round, self.concurrency, self.variant, self.sample
        )
    }
}

impl Round {
    fn parse(line: &str) -> Option<Round> {
        let mut words = line.split_whitespace();
        if words.next()? != "round" {
            return None;
        }
        let round = words.next()?.parse().ok()?;
        let concurrency = words.next()?.strip_prefix("c=")?.parse().ok()?;
        let variant = words.next()?.parse().ok()?;
        let sample = line[line.find("sample ")?..].parse().ok()?;
        Some(Round {
            round,
            concurrency,
            variant,
            sample,
        })
    }
}

/// One pair of valgrind runs of a client, differing only in their counted calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Instructions {
    /// Which repetition, from 1.
    pub rep: usize,
    /// Callers on the client's thread.
    pub concurrency: usize,
    /// Which client.
    pub variant: Variant,
    /// Counted calls and instructions of the shorter run.
    pub short: (u64, u64),
    /// Counted calls and instructions of the longer run.
    pub long: (u64, u64),
    /// Their difference per call.
    pub per_call: f64,
}

/// `valgrind rep 1 c=16 feign calls=200 instructions=... calls=1200 instructions=... per_call=...`.
impl fmt::Display for Instructions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "valgrind rep {} c={} {} calls={} instructions={} calls={} instructions={} per_call={:.1}",
            self.rep,
            self.concurrency,
            self.variant,
            self.short.0,
            self.short.1,
            self.long.0,
            self.long.1,
            self.per_call
        )
    }
}

impl Instructions {
    fn parse(line: &str) -> Option<Instructions> {
        let mut words = line.split_whitespace();
        if (words.next()?, words.next()?) != ("valgrind", "rep") {
            return None;
        }
        let rep = words.next()?.parse().ok()?;
        let concurrency = words.next()?.strip_prefix("c=")?.parse().ok()?;
        let variant = words.next()?.parse().ok()?;
        let pairs: Vec<u64> = words
            .filter_map(|word| word.split_once('='))
            .filter(|(key, _)| matches!(*key, "calls" | "instructions"))
            .filter_map(|(_, value)| value.parse().ok())
            .collect();
        let [short_calls, short_instructions, long_calls, long_instructions] = pairs[..] else {
            return None;
        };
        Some(Instructions {
            rep,
            concurrency,
            variant,
            short: (short_calls, short_instructions),
            long: (long_calls, long_instructions),
            per_call: number(line, "per_call")?,
        })
    }
}

/// Every line of one `per-call` run.
#[derive(Debug, Clone, Default)]
pub struct PerCall {
    /// The CPU-time rounds.
    pub rounds: Vec<Round>,
    /// The valgrind pairs.
    pub instructions: Vec<Instructions>,
}

impl PerCall {
    /// Reads the lines of a raw output.
    pub fn read(file: &RawFile) -> Result<PerCall> {
        let mut run = PerCall::default();
        for line in file.lines() {
            if let Some(round) = Round::parse(line) {
                run.rounds.push(round);
            } else if let Some(pair) = Instructions::parse(line) {
                run.instructions.push(pair);
            }
        }
        if run.rounds.is_empty() {
            return Err(Error::new(format!("{}: no `round` line", file.name())));
        }
        Ok(run)
    }

    /// The concurrencies, in the order they were run.
    fn concurrencies(&self) -> Vec<usize> {
        let mut seen = Vec::new();
        for round in &self.rounds {
            if !seen.contains(&round.concurrency) {
                seen.push(round.concurrency);
            }
        }
        seen
    }

    /// The variants measured, in table order.
    fn variants(&self) -> Vec<Variant> {
        Variant::ALL
            .into_iter()
            .filter(|variant| self.rounds.iter().any(|r| r.variant == *variant))
            .collect()
    }

    fn samples(&self, concurrency: usize, variant: Variant) -> impl Iterator<Item = &Round> {
        self.rounds
            .iter()
            .filter(move |r| r.concurrency == concurrency && r.variant == variant)
    }

    /// `metric` of `variant` against `other`'s in the same round, per round.
    fn paired(
        &self,
        concurrency: usize,
        variant: Variant,
        other: Variant,
        metric: impl Fn(&Sample, &Sample) -> f64,
    ) -> Vec<f64> {
        self.samples(concurrency, variant)
            .filter_map(|own| {
                let base = self
                    .samples(concurrency, other)
                    .find(|base| base.round == own.round)?;
                Some(metric(&own.sample, &base.sample))
            })
            .collect()
    }

    fn rounds_note(&self) -> String {
        let rounds = self.rounds.iter().map(|r| r.round).max().unwrap_or(0);
        let calls = self.rounds.first().map_or(0, |r| r.sample.calls);
        format!(
            "{} of {calls} counted calls per client process, the clients' order rotating each \
             round; ratios and differences are taken within a round.",
            match rounds {
                1 => "One round".to_owned(),
                n => format!("{n} rounds"),
            }
        )
    }
}

/// The goals of the issue against a variant's baseline: instructions, throughput, allocations.
struct Goals {
    instructions: Option<f64>,
    throughput: Option<f64>,
    extra_allocations: Option<f64>,
}

impl Goals {
    fn of(variant: Variant) -> Goals {
        match variant {
            Variant::FeignFixed => Goals {
                instructions: Some(1.03),
                throughput: Some(0.97),
                extra_allocations: Some(3.0),
            },
            Variant::FeignEureka => Goals {
                instructions: Some(1.10),
                throughput: Some(0.95),
                extra_allocations: Some(3.0),
            },
            Variant::FeignStatic => Goals {
                instructions: None,
                throughput: None,
                extra_allocations: Some(3.0),
            },
            _ => Goals {
                instructions: None,
                throughput: None,
                extra_allocations: None,
            },
        }
    }
}

fn ratio(value: f64) -> String {
    format!("{value:.3}")
}

/// Instructions per call and their ratio to the baseline, per concurrency and client.
pub fn instructions(file: &RawFile) -> Result<Block> {
    let run = PerCall::read(file)?;
    if run.instructions.is_empty() {
        return Err(Error::new(format!(
            "{}: no `valgrind` line (valgrind was not found?)",
            file.name()
        )));
    }
    Ok(instructions_of(&run).into_block(&[file]))
}

/// [`instructions`] of lines already read; empty without valgrind lines.
pub fn instructions_of(run: &PerCall) -> Summary {
    let mut table = Table::new([
        "concurrency",
        "client",
        "instructions per call",
        "ratio to baseline",
        "goal",
    ])
    .text_columns(2);
    let mut checks = Checks::default();
    let pairs = |c: usize, v: Variant| {
        run.instructions
            .iter()
            .filter(move |p| p.concurrency == c && p.variant == v)
    };
    for concurrency in run.concurrencies() {
        for variant in run.variants() {
            let own: Vec<&Instructions> = pairs(concurrency, variant).collect();
            if own.is_empty() {
                continue;
            }
            let baseline = variant.baseline();
            let ratios: Vec<f64> = own
                .iter()
                .filter_map(|pair| {
                    let base = pairs(concurrency, baseline).find(|b| b.rep == pair.rep)?;
                    Some(pair.per_call / base.per_call)
                })
                .collect();
            let spread = (baseline != variant).then(|| Spread::of(ratios)).flatten();
            let goal = match (Goals::of(variant).instructions, spread) {
                (Some(goal), Some(spread)) => checks.add(
                    format!(
                        "instructions per call, {} ÷ {}",
                        variant.label(),
                        baseline.label()
                    ),
                    Target::AtMost(goal),
                    spread.median,
                    ratio,
                ),
                _ => "—".to_owned(),
            };
            table.row([
                concurrency.to_string(),
                variant.label().to_owned(),
                format!("{:.0}", median(own.iter().map(|p| p.per_call))),
                spread.map_or("—".to_owned(), |s| s.show(ratio)),
                goal,
            ]);
        }
    }
    let Some(first) = run.instructions.first() else {
        return Summary::default();
    };
    let reps = run.instructions.iter().map(|p| p.rep).max().unwrap_or(0);
    let note = format!(
        "Instructions of the client process under `valgrind --tool=cachegrind`: per repetition, \
         two runs that differ only in their counted calls ({} and {}), so start-up cancels out; \
         {}, median (min–max) of the ratio taken within each. Balanced clients \
         are held against raw reqwest calling the same three ports in turn, the others against \
         raw reqwest on one port.",
        first.short.0,
        first.long.0,
        match reps {
            1 => "one repetition".to_owned(),
            n => format!("{n} repetitions"),
        }
    );
    let goals = checks.goals();
    Summary::new(table, note).with_goals(goals)
}

/// CPU time per call and calls per second, and their ratios to the baseline within a round.
pub fn cpu(file: &RawFile) -> Result<Block> {
    Ok(cpu_of(&PerCall::read(file)?).into_block(&[file]))
}

/// [`cpu`] of lines already read.
pub fn cpu_of(run: &PerCall) -> Summary {
    let mut table = Table::new([
        "concurrency",
        "client",
        "CPU per call",
        "ratio to baseline",
        "calls/s",
        "ratio to baseline",
        "goal",
        "errors",
    ])
    .text_columns(2);
    let mut checks = Checks::default();
    for concurrency in run.concurrencies() {
        for variant in run.variants() {
            let own: Vec<&Sample> = run
                .samples(concurrency, variant)
                .map(|r| &r.sample)
                .collect();
            let baseline = variant.baseline();
            let against =
                |metric: fn(&Sample) -> f64| {
                    (baseline != variant)
                        .then(|| {
                            Spread::of(run.paired(concurrency, variant, baseline, |o, b| {
                                metric(o) / metric(b)
                            }))
                        })
                        .flatten()
                };
            let cpu_ratio = against(Sample::cpu_us_per_call);
            let rate_ratio = against(Sample::calls_per_second);
            let goal = match (Goals::of(variant).throughput, rate_ratio) {
                (Some(goal), Some(spread)) => checks.add(
                    format!(
                        "calls/s, client and servers pinned to their own cores, {} ÷ {}",
                        variant.label(),
                        baseline.label()
                    ),
                    Target::AtLeast(goal),
                    spread.median,
                    ratio,
                ),
                _ => "—".to_owned(),
            };
            table.row([
                concurrency.to_string(),
                variant.label().to_owned(),
                format!("{:.2} µs", median(own.iter().map(|s| s.cpu_us_per_call()))),
                cpu_ratio.map_or("—".to_owned(), |s| s.show(ratio)),
                format!("{:.0}", median(own.iter().map(|s| s.calls_per_second()))),
                rate_ratio.map_or("—".to_owned(), |s| s.show(ratio)),
                goal,
                own.iter().map(|s| s.errors).sum::<u64>().to_string(),
            ]);
        }
    }
    let note = format!(
        "Client process alone, pinned to one core, the servers to the other; CPU time is the \
         client's user + system time. {}",
        run.rounds_note()
    );
    let goals = checks.goals();
    Summary::new(table, note).with_goals(goals)
}

/// Allocations and bytes per call, and the allocations over raw reqwest's within a round.
pub fn allocations(file: &RawFile) -> Result<Block> {
    Ok(allocations_of(&PerCall::read(file)?).into_block(&[file]))
}

/// [`allocations`] of lines already read.
pub fn allocations_of(run: &PerCall) -> Summary {
    let mut table = Table::new([
        "concurrency",
        "client",
        "allocations per call",
        "bytes per call",
        "more than raw reqwest",
        "goal",
    ])
    .text_columns(2);
    let mut checks = Checks::default();
    for concurrency in run.concurrencies() {
        for variant in run.variants() {
            let own: Vec<&Sample> = run
                .samples(concurrency, variant)
                .map(|r| &r.sample)
                .collect();
            let more = (variant != Variant::Raw)
                .then(|| {
                    Spread::of(run.paired(concurrency, variant, Variant::Raw, |o, b| {
                        o.allocations_per_call() - b.allocations_per_call()
                    }))
                })
                .flatten();
            let goal = match (Goals::of(variant).extra_allocations, more) {
                (Some(goal), Some(spread)) => checks.add(
                    format!(
                        "allocations per call over raw reqwest's, {}",
                        variant.label()
                    ),
                    Target::AtMost(goal),
                    spread.median,
                    plus,
                ),
                _ => "—".to_owned(),
            };
            table.row([
                concurrency.to_string(),
                variant.label().to_owned(),
                format!(
                    "{:.2}",
                    median(own.iter().map(|s| s.allocations_per_call()))
                ),
                format!("{:.0}", median(own.iter().map(|s| s.bytes_per_call()))),
                more.map_or("—".to_owned(), |s| s.show(plus)),
                goal,
            ]);
        }
    }
    let note = format!(
        "Allocations counted by a counting allocator in the client process. {}",
        run.rounds_note()
    );
    let goals = checks.goals();
    Summary::new(table, note).with_goals(goals)
}

fn plus(value: f64) -> String {
    format!("{value:+.2}")
}

/// Two runs side by side, a build before a change and one after it: instructions, allocations
/// and bytes per call of each client, and the change in instructions. `files`: before, after.
pub fn change(files: &[RawFile]) -> Result<Block> {
    let [before, after] = files else {
        return Err(Error::new(format!(
            "takes two raw files (before, after), not {}",
            files.len()
        )));
    };
    let runs = [PerCall::read(before)?, PerCall::read(after)?];
    for (run, file) in runs.iter().zip([before, after]) {
        if run.instructions.is_empty() {
            return Err(Error::new(format!("{}: no `valgrind` line", file.name())));
        }
    }
    let mut table = Table::new([
        "concurrency",
        "client",
        "instructions per call, before",
        "after",
        "change",
        "allocations per call, before",
        "after",
        "bytes per call, before",
        "after",
    ])
    .text_columns(2);
    let instructions = |run: &PerCall, c: usize, v: Variant| {
        let own: Vec<f64> = run
            .instructions
            .iter()
            .filter(|p| p.concurrency == c && p.variant == v)
            .map(|p| p.per_call)
            .collect();
        (!own.is_empty()).then(|| median(own))
    };
    let allocations = |run: &PerCall, c: usize, v: Variant| {
        let own: Vec<&Sample> = run.samples(c, v).map(|r| &r.sample).collect();
        (
            median(own.iter().map(|s| s.allocations_per_call())),
            median(own.iter().map(|s| s.bytes_per_call())),
        )
    };
    let [old, new] = &runs;
    for concurrency in new.concurrencies() {
        for variant in new.variants() {
            let (Some(was), Some(is)) = (
                instructions(old, concurrency, variant),
                instructions(new, concurrency, variant),
            ) else {
                continue;
            };
            let (allocs_was, bytes_was) = allocations(old, concurrency, variant);
            let (allocs_is, bytes_is) = allocations(new, concurrency, variant);
            table.row([
                concurrency.to_string(),
                variant.label().to_owned(),
                format!("{was:.0}"),
                format!("{is:.0}"),
                format!("{:+.2} %", (is / was - 1.0) * 100.0),
                format!("{allocs_was:.2}"),
                format!("{allocs_is:.2}"),
                format!("{bytes_was:.0}"),
                format!("{bytes_is:.0}"),
            ]);
        }
    }
    let note = "Instructions per call as in the instructions table above (median of the \
                repetitions), allocations and bytes per call as in the allocations table, of \
                two builds run one after the other on this machine: before, then after.";
    Ok(Summary::new(table, note).into_block(&[before, after]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: &str) -> RawFile {
        RawFile::from_text("x.txt", format!("$ per-call\n{lines}"))
    }

    const ROUNDS: &str = "\
round 1 c=1 raw sample calls=100 errors=0 cpu_ns=1000000 wall_ns=2000000 allocs=5100 bytes=100
round 1 c=1 feign sample calls=100 errors=0 cpu_ns=1100000 wall_ns=2200000 allocs=5400 bytes=100
round 2 c=1 feign sample calls=100 errors=1 cpu_ns=1300000 wall_ns=2600000 allocs=5400 bytes=100
round 2 c=1 raw sample calls=100 errors=0 cpu_ns=1000000 wall_ns=2000000 allocs=5100 bytes=100
valgrind rep 1 c=1 raw calls=200 instructions=1000 calls=1200 instructions=101000 per_call=100.0
valgrind rep 1 c=1 feign calls=200 instructions=1000 calls=1200 instructions=104000 per_call=103.0
";

    #[test]
    fn a_change_sets_two_runs_side_by_side() {
        let before = file(ROUNDS);
        let after = file(&ROUNDS.replace("per_call=103.0", "per_call=101.97"));
        let block = change(&[before, after]).unwrap();
        assert!(block.markdown.contains(" 103 | "), "{}", block.markdown);
        assert!(block.markdown.contains(" 102 | "), "{}", block.markdown);
        assert!(block.markdown.contains("-1.00 %"), "{}", block.markdown);
        assert!(change(&[file(ROUNDS)]).is_err());
    }

    #[test]
    fn lines_read_back_as_printed() {
        let run = PerCall::read(&file(ROUNDS)).unwrap();
        assert_eq!(run.rounds.len(), 4);
        assert_eq!(run.instructions.len(), 2);
        assert_eq!(run.rounds[1].to_string(), ROUNDS.lines().nth(1).unwrap());
        assert_eq!(
            run.instructions[1].to_string(),
            ROUNDS.lines().nth(5).unwrap()
        );
    }

    #[test]
    fn ratios_are_taken_within_a_round_and_checked_against_the_goals() {
        let raw = file(ROUNDS);
        let block = cpu(&raw).unwrap();
        // CPU: 1.1 and 1.3 against 1.0 in each round; calls/s 1/1.1 and 0.99/1.3.
        assert!(
            block.markdown.contains("1.200 (1.100–1.300)"),
            "{}",
            block.markdown
        );
        assert!(block.markdown.contains("≥ 0.970 MISSED"));
        assert_eq!(block.goals.len(), 1);
        assert!(!block.goals[0].met);
        let block = instructions(&raw).unwrap();
        assert!(
            block.markdown.contains(" 1.030 | ≤ 1.030 met |"),
            "{}",
            block.markdown
        );
        assert!(block.goals[0].met, "{:?}", block.goals);
        let block = allocations(&raw).unwrap();
        assert!(block.markdown.contains("+3.00"));
        assert!(block.goals[0].met);
    }
}
