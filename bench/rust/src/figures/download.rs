//! The `download` benchmark's lines and table: one row per download (how it was read, time,
//! throughput, the highest resident set sampled and the kernel's peak after it).

use super::goals::{Checks, Target};
use super::text::table_cells;
use super::{Block, Error, RawFile, Result, Summary};
use crate::table::Table;

/// The goal: resident memory stays under this many MiB while a GiB streams through.
pub const GOAL_MIB: f64 = 64.0;

/// How a download was read, as its rows name it.
pub const BUFFERED: &str = "Bytes (buffered)";

/// One download.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// `Stream`, `AsyncRead` or [`BUFFERED`].
    pub mode: String,
    /// Which run of that mode, from 1.
    pub run: usize,
    /// How long it took.
    pub seconds: f64,
    /// MiB per second.
    pub mib_per_second: f64,
    /// The highest `VmRSS` sampled during it, MiB.
    pub peak_mib: f64,
    /// `VmHWM` after it, MiB.
    pub hwm_mib: f64,
}

impl Measured {
    fn parse(line: &str) -> Option<Measured> {
        let cells = table_cells(line)?;
        let [mode, run, seconds, rate, peak, hwm] = cells[..] else {
            return None;
        };
        Some(Measured {
            mode: mode.to_owned(),
            run: run.parse().ok()?,
            seconds: seconds.parse().ok()?,
            mib_per_second: rate.parse().ok()?,
            peak_mib: peak.parse().ok()?,
            hwm_mib: hwm.parse().ok()?,
        })
    }
}

/// The rows a `download` run prints, one per download.
pub fn runs_table(measured: &[Measured]) -> Table {
    let mut table = Table::new([
        "mode",
        "run",
        "seconds",
        "MiB/s",
        "peak VmRSS sampled (MiB)",
        "VmHWM after (MiB)",
    ])
    .text_columns(2);
    for m in measured {
        table.row([
            m.mode.clone(),
            m.run.to_string(),
            format!("{:.2}", m.seconds),
            format!("{:.0}", m.mib_per_second),
            format!("{:.1}", m.peak_mib),
            format!("{:.1}", m.hwm_mib),
        ]);
    }
    table
}

/// The first line's `resident before the first: 5.3 MiB`, in MiB.
pub fn resident_before_line(mib: f64) -> String {
    format!("resident before the first: {mib:.1} MiB")
}

fn resident_before(file: &RawFile) -> Option<f64> {
    file.lines().find_map(|line| {
        let (_, rest) = line.split_once("resident before the first: ")?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// Per mode, over the runs of each file: resident memory and throughput.
pub fn block(files: &[RawFile]) -> Result<Block> {
    let mut runs = Vec::new();
    for file in files {
        let measured: Vec<Measured> = file.lines().filter_map(Measured::parse).collect();
        if measured.is_empty() {
            return Err(Error::new(format!("{}: no download row", file.name())));
        }
        runs.push((measured, resident_before(file)));
    }
    let references: Vec<&RawFile> = files.iter().collect();
    Ok(summary(&runs).into_block(&references))
}

/// [`block`] of rows already read, each set with the resident memory before its first run.
pub fn summary(runs: &[(Vec<Measured>, Option<f64>)]) -> Summary {
    let mut table = Table::new([
        "read as",
        "resident before",
        "peak VmRSS sampled, min–max",
        "VmHWM after the last run",
        "throughput, min–max",
        "runs",
    ]);
    let mut checks = Checks::default();
    let range = |values: Vec<f64>, format: fn(f64) -> String| {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if format(low) == format(high) {
            format(low)
        } else {
            format!("{}–{}", format(low), format(high))
        }
    };
    let mut streamed_peak: f64 = 0.0;
    for (measured, before) in runs {
        let mut modes: Vec<&str> = Vec::new();
        for m in measured {
            if !modes.contains(&m.mode.as_str()) {
                modes.push(&m.mode);
            }
        }
        for (index, mode) in modes.iter().enumerate() {
            let own: Vec<&Measured> = measured.iter().filter(|m| m.mode == *mode).collect();
            let hwm = own.last().map_or(0.0, |m| m.hwm_mib);
            if *mode != BUFFERED {
                streamed_peak = own
                    .iter()
                    .map(|m| m.peak_mib.max(m.hwm_mib))
                    .fold(streamed_peak, f64::max);
            }
            table.row([
                match *mode {
                    "Stream" => "`Stream` of `Bytes`".to_owned(),
                    "AsyncRead" => "`AsyncRead` (`into_async_read`)".to_owned(),
                    BUFFERED => "for contrast: `Bytes`, the body buffered whole".to_owned(),
                    other => other.to_owned(),
                },
                match (index, before) {
                    (0, Some(before)) => mib(*before),
                    _ => String::new(),
                },
                range(own.iter().map(|m| m.peak_mib).collect(), mib),
                mib(hwm),
                range(own.iter().map(|m| m.mib_per_second).collect(), |v| {
                    format!("{v:.0} MiB/s")
                }),
                own.len().to_string(),
            ]);
        }
    }
    if streamed_peak > 0.0 {
        checks.add(
            "resident memory while 1 GiB streams through a `StreamingResponse`, highest sample"
                .to_owned(),
            Target::Below(GOAL_MIB),
            streamed_peak,
            mib,
        );
    }
    Summary::new(
        table,
        "Resident memory of the whole process (server, client and runtime), sampled every 5 ms; \
         `VmHWM` is the kernel's peak.",
    )
    .with_goals(checks.goals())
}

fn mib(value: f64) -> String {
    format!("{value:.1} MiB")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_back_as_printed() {
        let measured = Measured {
            mode: "AsyncRead".into(),
            run: 2,
            seconds: 0.5,
            mib_per_second: 2066.0,
            peak_mib: 9.6,
            hwm_mib: 9.5,
        };
        let table = runs_table(std::slice::from_ref(&measured)).to_string();
        let row = table.lines().nth(2).unwrap();
        assert_eq!(Measured::parse(row), Some(measured));
        assert_eq!(Measured::parse(table.lines().next().unwrap()), None);
    }
}
