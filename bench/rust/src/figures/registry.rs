//! feign-eureka-server's `server_load` bench: the embedded registry against Spring Cloud
//! Netflix Eureka's under the same load (one line per run and registry, the order alternating
//! between runs), and its dashboard runs (renewal latency alone and beside dashboard readers).

use super::goals::{Checks, Target};
use super::spread::{runs_note, show_median, Spread};
use super::text::{micros_after, number_after};
use super::{Block, Error, RawFile, Result, Summary};
use crate::stats::format_us;
use crate::table::Table;

/// The embedded registry's name in the run lines.
const EMBEDDED: &str = "embedded (feign-eureka-server)";

/// One registry's run.
#[derive(Debug, Clone, PartialEq)]
struct Measured {
    run: usize,
    registry: String,
    register_s: f64,
    register_cpu_s: f64,
    register_errors: f64,
    renewals: Latency,
    fetches: Latency,
    load_cpu_s: f64,
    rss_after_mib: f64,
    peak_mib: f64,
}

/// One kind of request under load.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Latency {
    p50_us: f64,
    p99_us: f64,
    max_us: f64,
    errors: f64,
}

impl Latency {
    fn parse(part: &str) -> Option<Latency> {
        Some(Latency {
            p50_us: micros_after(part, "p50")?,
            p99_us: micros_after(part, "p99")?,
            max_us: micros_after(part, "max")?,
            errors: number_after(part, "errors")?,
        })
    }
}

impl Measured {
    /// `run 1/3: embedded (feign-eureka-server): registered in 0.18 s (0 errors, 0.16 s CPU),
    /// ...; renewals ...; fetches ...; 0.61 s CPU under load; RSS ... 50.2 MiB after load,
    /// peak 50.2 MiB`.
    fn parse(line: &str) -> Option<Measured> {
        let rest = line.strip_prefix("run ")?;
        let (run, rest) = rest.split_once('/')?;
        let (_, rest) = rest.split_once(": ")?;
        let (registry, rest) = rest.split_once(": registered in ")?;
        let parts: Vec<&str> = rest.split("; ").collect();
        let part = |prefix: &str| parts.iter().find(|p| p.starts_with(prefix)).copied();
        let head = parts.first()?;
        let mib_before = |text: &str, label: &str| -> Option<f64> {
            let (before, _) = text.split_once(label)?;
            before
                .trim_end()
                .trim_end_matches(" MiB")
                .rsplit([' ', ','])
                .next()?
                .parse()
                .ok()
        };
        let rss = part("RSS ")?;
        Some(Measured {
            run: run.parse().ok()?,
            registry: registry.to_owned(),
            register_s: head.split_whitespace().next()?.parse().ok()?,
            register_errors: number_after(head, "(")?,
            register_cpu_s: head
                .split_once("errors, ")?
                .1
                .split_whitespace()
                .next()?
                .parse()
                .ok()?,
            renewals: Latency::parse(part("renewals")?)?,
            fetches: Latency::parse(part("fetches")?)?,
            load_cpu_s: parts
                .iter()
                .find(|p| p.ends_with("CPU under load"))?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?,
            rss_after_mib: mib_before(rss, "after load")?,
            peak_mib: rss
                .split_once("peak ")?
                .1
                .split_whitespace()
                .next()?
                .parse()
                .ok()?,
        })
    }
}

fn read(file: &RawFile) -> Result<Vec<Measured>> {
    let measured: Vec<Measured> = file.lines().filter_map(Measured::parse).collect();
    if measured.is_empty() {
        return Err(Error::new(format!("{}: no `run` line", file.name())));
    }
    Ok(measured)
}

fn seconds(value: f64) -> String {
    format!("{value:.2} s")
}

fn mib(value: f64) -> String {
    format!("{value:.1} MiB")
}

/// Per registry, medians over the runs.
pub fn latency(file: &RawFile) -> Result<Block> {
    let measured = read(file)?;
    let mut registries: Vec<&str> = Vec::new();
    for m in &measured {
        if !registries.contains(&m.registry.as_str()) {
            registries.push(&m.registry);
        }
    }
    let mut table = Table::new([
        "registry",
        "registration (its CPU)",
        "renewals p50 / p99 / max",
        "full fetches p50 / p99 / max",
        "errors",
        "CPU under load",
        "RSS after load (peak)",
    ]);
    for registry in registries {
        let own: Vec<&Measured> = measured.iter().filter(|m| m.registry == registry).collect();
        let median = |metric: &dyn Fn(&Measured) -> f64| {
            Spread::of(own.iter().map(|m| metric(m))).map_or(0.0, |s| s.median)
        };
        let latencies = |of: fn(&Measured) -> Latency| {
            format!(
                "{} / {} / {}",
                format_us(median(&|m| of(m).p50_us)),
                format_us(median(&|m| of(m).p99_us)),
                format_us(median(&|m| of(m).max_us))
            )
        };
        let errors: f64 = own
            .iter()
            .map(|m| m.register_errors + m.renewals.errors + m.fetches.errors)
            .sum();
        table.row([
            registry.to_owned(),
            format!(
                "{} ({})",
                seconds(median(&|m| m.register_s)),
                seconds(median(&|m| m.register_cpu_s))
            ),
            latencies(|m| m.renewals),
            latencies(|m| m.fetches),
            format!("{errors:.0}"),
            seconds(median(&|m| m.load_cpu_s)),
            format!(
                "{} ({})",
                mib(median(&|m| m.rss_after_mib)),
                mib(median(&|m| m.peak_mib))
            ),
        ]);
    }
    let runs = measured.iter().map(|m| m.run).max().unwrap_or(0);
    Ok(Summary::new(
        table,
        format!(
            "{} Each registry in a process of its own, which one goes first alternating between \
             runs; errors summed over registration, renewals and fetches of every run.",
            runs_note(runs)
        ),
    )
    .with_setup(file, " renewals/s and ")
    .into_block(&[file]))
}

/// A row of the ratios: its name, the ratio of one run's two lines (ours, Spring's), the goal,
/// how a ratio is written.
type Ratio = (
    &'static str,
    fn(&Measured, &Measured) -> f64,
    Option<Target>,
    fn(f64) -> String,
);

/// Spring's over the embedded registry's figures, within each run.
pub fn ratios(file: &RawFile) -> Result<Block> {
    let measured = read(file)?;
    let pairs: Vec<(&Measured, &Measured)> = measured
        .iter()
        .filter(|m| m.registry == EMBEDDED)
        .filter_map(|ours| {
            let theirs = measured
                .iter()
                .find(|m| m.run == ours.run && m.registry != EMBEDDED)?;
            Some((ours, theirs))
        })
        .collect();
    if pairs.is_empty() {
        return Err(Error::new(format!(
            "{}: no run with both registries",
            file.name()
        )));
    }
    let mut table = Table::new(["figure", "ratio within a run", "goal"]).text_columns(1);
    let mut checks = Checks::default();
    let times = |v: f64| format!("{v:.1}×");
    let fraction = |v: f64| format!("{v:.3}");
    let rows: [Ratio; 6] = [
        (
            "renewals p99, Spring ÷ embedded",
            |o, t| t.renewals.p99_us / o.renewals.p99_us,
            Some(Target::AtLeast(5.0)),
            times,
        ),
        (
            "full fetches p99, Spring ÷ embedded",
            |o, t| t.fetches.p99_us / o.fetches.p99_us,
            Some(Target::AtLeast(5.0)),
            times,
        ),
        (
            "CPU under load, Spring ÷ embedded",
            |o, t| t.load_cpu_s / o.load_cpu_s,
            None,
            times,
        ),
        (
            "CPU while registering, Spring ÷ embedded",
            |o, t| t.register_cpu_s / o.register_cpu_s,
            None,
            times,
        ),
        (
            "RSS after load, embedded ÷ Spring",
            |o, t| o.rss_after_mib / t.rss_after_mib,
            Some(Target::AtMost(0.10)),
            fraction,
        ),
        (
            "peak RSS, embedded ÷ Spring",
            |o, t| o.peak_mib / t.peak_mib,
            None,
            fraction,
        ),
    ];
    for (figure, ratio, target, format) in rows {
        let spread = Spread::of(pairs.iter().map(|(o, t)| ratio(o, t)));
        let goal = match (target, spread) {
            (Some(target), Some(spread)) => checks.add(
                format!("the embedded registry against Spring's, 10,000 instances: {figure}"),
                target,
                spread.median,
                format,
            ),
            _ => "—".to_owned(),
        };
        table.row([
            figure.to_owned(),
            spread.map_or("—".to_owned(), |s| s.show(format)),
            goal,
        ]);
    }
    Ok(Summary::new(
        table,
        format!(
            "Ratios taken within each run, median (min–max) over {} runs.",
            pairs.len()
        ),
    )
    .with_goals(checks.goals())
    .into_block(&[file]))
}

/// One dashboard run: renewals alone and beside the readers, and the pages they got.
#[derive(Debug, Clone, Default)]
struct Session {
    /// The commit of an older build the session measured, from its `# before:` line.
    before: Option<String>,
    alone: Option<(f64, f64)>,
    beside: Option<(f64, f64)>,
    pages_per_second: Vec<f64>,
    page_bytes: Vec<f64>,
}

fn session(file: &RawFile) -> Session {
    let mut session = Session::default();
    for line in file.lines() {
        if let Some(before) = line.strip_prefix("# before:") {
            // `# before: feign-eureka-server/src as of commit 9fab12a (...)`
            session.before = Some(
                before
                    .split_once("commit ")
                    .and_then(|(_, rest)| rest.split_whitespace().next())
                    .unwrap_or("an older commit")
                    .to_owned(),
            );
        }
        if let Some((_, dashboard)) = line.split_once("dashboard: ") {
            if let Some(pages) = dashboard
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
            {
                session.pages_per_second.push(pages);
            }
            if let Some(bytes) = number_after(dashboard, "pages/s of") {
                session.page_bytes.push(bytes);
            }
        }
        // The pooled lines: `  alone   218 µs / 6.93 ms / 59.11 ms`.
        let pooled = |label: &str| -> Option<(f64, f64)> {
            let rest = line.strip_prefix("  ")?.strip_prefix(label)?;
            let figures: Vec<&str> = rest.split('/').collect();
            let us = |at: usize| {
                let mut words = figures.get(at)?.split_whitespace();
                super::text::micros(words.next()?, words.next()?)
            };
            Some((us(0)?, us(1)?))
        };
        if let Some(alone) = pooled("alone") {
            session.alone = Some(alone);
        } else if let Some(beside) = pooled("beside 2 dashboard readers") {
            session.beside = Some(beside);
        }
    }
    session
}

/// The dashboard's sessions, each a file: renewal latency alone and beside two readers, and
/// what the readers got.
pub fn dashboard(files: &[RawFile]) -> Result<Block> {
    let mut table = Table::new([
        "build",
        "session",
        "renewals alone, p50 / p99",
        "beside 2 dashboard readers, p50 / p99",
        "pages served per second",
        "page size",
    ])
    .text_columns(2);
    for file in files {
        let session = session(file);
        let (Some(alone), Some(beside)) = (session.alone, session.beside) else {
            return Err(Error::new(format!(
                "{}: no pooled `alone` and `beside` lines",
                file.name()
            )));
        };
        let pair = |(p50, p99): (f64, f64)| format!("{} / {}", format_us(p50), format_us(p99));
        let range = |values: &[f64], format: fn(f64) -> String| {
            let low = values.iter().copied().fold(f64::INFINITY, f64::min);
            let high = values.iter().copied().fold(0.0, f64::max);
            format!("{}–{}", format(low), format(high))
        };
        table.row([
            match &session.before {
                Some(commit) => format!("whole registry per request ({commit})"),
                None => "pages, cached".to_owned(),
            },
            format!("[{0}](bench/results/raw/{0})", file.name()),
            pair(alone),
            pair(beside),
            range(&session.pages_per_second, |v| format!("{v:.0}")),
            show_median(session.page_bytes.iter().copied(), |v| {
                format!("{:.0} KB", v / 1_000.0)
            }),
        ]);
    }
    let references: Vec<&RawFile> = files.iter().collect();
    Ok(Summary::new(
        table,
        "Renewal latency from when each renewal was due, every run of a session pooled. \
         \"Whole registry per request\": the older build a file's `# before:` line names; \
         \"pages, cached\": 200 instances a page, each page kept until the registry changes or \
         for 5 s.",
    )
    .into_block(&references))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_line_reads() {
        let line = "run 2/3: Spring Cloud Netflix Eureka: registered in 5.00 s (0 errors, 9.23 s CPU), full fetch 544345 bytes gzipped; renewals 1000.0/s p50 342 µs p99 1.89 ms max 18.01 ms errors 0; fetches 200.0/s p50 1.07 ms p99 3.27 ms max 16.80 ms errors 0; 3.28 s CPU under load; RSS 328.5 MiB started, 480.7 MiB registered, 496.4 MiB after load, peak 498.4 MiB";
        let m = Measured::parse(line).unwrap();
        assert_eq!(
            (m.run, m.registry.as_str()),
            (2, "Spring Cloud Netflix Eureka")
        );
        assert_eq!(
            (m.register_s, m.register_cpu_s, m.register_errors),
            (5.0, 9.23, 0.0)
        );
        assert_eq!(m.renewals.p99_us, 1_890.0);
        assert_eq!(m.fetches.max_us, 16_800.0);
        assert_eq!(
            (m.load_cpu_s, m.rss_after_mib, m.peak_mib),
            (3.28, 496.4, 498.4)
        );
    }
}
