//! The `adaptive` benchmark's lines and table: per run and client, what it answered within the
//! deadline, shed and let time out, and the latency of what it answered. The first run of this
//! benchmark printed only its table; that table is read as its one run.

use std::fmt;

use super::spread::{runs_note, show, show_median};
use super::text::{field, micros, number, table_cells};
use super::{Block, Error, RawFile, Result, Summary};
use crate::stats::format_us;
use crate::table::Table;

/// What guards the client's calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Guard {
    /// Nothing.
    None,
    /// A fixed bulkhead of this many calls.
    Bulkhead(u32),
    /// The adaptive concurrency limit with this tolerance.
    Adaptive(f64),
}

impl Guard {
    /// The name in tables.
    pub fn label(self) -> String {
        match self {
            Guard::None => "no limit".to_owned(),
            Guard::Bulkhead(size) => format!("fixed bulkhead, {size} calls"),
            Guard::Adaptive(tolerance) => format!("adaptive limit, tolerance {tolerance}"),
        }
    }

    /// The short name in the run lines: `none`, `bulkhead-25`, `adaptive-1.25`.
    pub fn key(self) -> String {
        match self {
            Guard::None => "none".to_owned(),
            Guard::Bulkhead(size) => format!("bulkhead-{size}"),
            Guard::Adaptive(tolerance) => format!("adaptive-{tolerance}"),
        }
    }

    fn from_key(key: &str) -> Option<Guard> {
        if key == "none" {
            return Some(Guard::None);
        }
        if let Some(size) = key.strip_prefix("bulkhead-") {
            return size.parse().ok().map(Guard::Bulkhead);
        }
        key.strip_prefix("adaptive-")?
            .parse()
            .ok()
            .map(Guard::Adaptive)
    }

    fn from_label(label: &str) -> Option<Guard> {
        if label == "no limit" {
            return Some(Guard::None);
        }
        if let Some(size) = label
            .strip_prefix("fixed bulkhead, ")
            .and_then(|rest| rest.strip_suffix(" calls"))
        {
            return size.parse().ok().map(Guard::Bulkhead);
        }
        label
            .strip_prefix("adaptive limit, tolerance ")?
            .parse()
            .ok()
            .map(Guard::Adaptive)
    }
}

/// One client's figures in one run, per second of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Which run, from 1.
    pub run: usize,
    /// The client's guard.
    pub guard: Guard,
    /// Calls answered within the deadline, per second.
    pub goodput: f64,
    /// Calls answered, per second.
    pub answered: f64,
    /// Calls refused by the guard at once, per second.
    pub shed: f64,
    /// Other failed calls (timed out), per second.
    pub failed: f64,
    /// p50 of the answered calls, µs.
    pub p50_us: f64,
    /// p99 of the answered calls, µs.
    pub p99_us: f64,
    /// The most requests the server had in flight at once.
    pub peak_in_flight: u64,
}

/// `adaptive run=1 client=bulkhead-25 goodput=690 answered=690 shed=810 failed=0 ...`.
impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "adaptive run={} client={} goodput={:.1} answered={:.1} shed={:.1} failed={:.1} p50_us={:.0} p99_us={:.0} peak_in_flight={}",
            self.run,
            self.guard.key(),
            self.goodput,
            self.answered,
            self.shed,
            self.failed,
            self.p50_us,
            self.p99_us,
            self.peak_in_flight
        )
    }
}

impl Measured {
    /// Reads a line as [`Display`](fmt::Display) writes it.
    pub fn parse(line: &str) -> Option<Measured> {
        if !line.starts_with("adaptive run=") {
            return None;
        }
        Some(Measured {
            run: number(line, "run")? as usize,
            guard: Guard::from_key(field(line, "client")?)?,
            goodput: number(line, "goodput")?,
            answered: number(line, "answered")?,
            shed: number(line, "shed")?,
            failed: number(line, "failed")?,
            p50_us: number(line, "p50_us")?,
            p99_us: number(line, "p99_us")?,
            peak_in_flight: number(line, "peak_in_flight")? as u64,
        })
    }

    /// A row of the table the first run printed, read as run 1.
    fn parse_first_table(line: &str) -> Option<Measured> {
        let cells = table_cells(line)?;
        let [label, goodput, answered, shed, failed, p50, p99, peak] = cells[..] else {
            return None;
        };
        let latency = |cell: &str| {
            let (value, unit) = cell.split_once(' ')?;
            micros(value, unit)
        };
        Some(Measured {
            run: 1,
            guard: Guard::from_label(label)?,
            goodput: goodput.parse().ok()?,
            answered: answered.parse().ok()?,
            shed: shed.parse().ok()?,
            failed: failed.parse().ok()?,
            p50_us: latency(p50)?,
            p99_us: latency(p99)?,
            peak_in_flight: peak.parse().ok()?,
        })
    }
}

/// Every client's line of one run of `adaptive` (or the first run's table rows).
pub fn read(file: &RawFile) -> Result<Vec<Measured>> {
    let mut measured: Vec<Measured> = file.lines().filter_map(Measured::parse).collect();
    if measured.is_empty() {
        measured = file
            .lines()
            .filter_map(Measured::parse_first_table)
            .collect();
    }
    if measured.is_empty() {
        return Err(Error::new(format!("{}: no client line", file.name())));
    }
    Ok(measured)
}

/// Goodput, shedding and latency per client.
pub fn block(file: &RawFile) -> Result<Block> {
    Ok(summary(&read(file)?)
        .with_setup(file, "server latency ")
        .into_block(&[file]))
}

/// [`block`] of lines already read.
pub fn summary(measured: &[Measured]) -> Summary {
    let mut guards: Vec<Guard> = Vec::new();
    for m in measured {
        if !guards.contains(&m.guard) {
            guards.push(m.guard);
        }
    }
    let mut table = Table::new([
        "client",
        "goodput/s (answered within the deadline)",
        "answered/s",
        "shed at once/s",
        "timed out/s",
        "p50 answered",
        "p99 answered",
        "server's peak in flight",
    ]);
    let whole = |v: f64| format!("{v:.0}");
    for guard in guards {
        let own: Vec<&Measured> = measured.iter().filter(|m| m.guard == guard).collect();
        table.row([
            guard.label(),
            show(own.iter().map(|m| m.goodput), whole),
            show_median(own.iter().map(|m| m.answered), whole),
            show_median(own.iter().map(|m| m.shed), whole),
            show_median(own.iter().map(|m| m.failed), whole),
            show_median(own.iter().map(|m| m.p50_us), format_us),
            show(own.iter().map(|m| m.p99_us), format_us),
            show_median(own.iter().map(|m| m.peak_in_flight as f64), whole),
        ]);
    }
    let runs = measured.iter().map(|m| m.run).max().unwrap_or(0);
    let order = if runs > 1 {
        " The clients' order reverses every other run (A B, B A), each against a fresh server."
    } else {
        ""
    };
    Summary::new(table, format!("{}{order}", runs_note(runs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_the_first_runs_table_read_back() {
        let line = Measured {
            run: 2,
            guard: Guard::Adaptive(1.25),
            goodput: 541.0,
            answered: 541.0,
            shed: 959.0,
            failed: 0.0,
            p50_us: 25_450.0,
            p99_us: 31_390.0,
            peak_in_flight: 20,
        };
        assert_eq!(Measured::parse(&line.to_string()), Some(line));
        let first = Measured::parse_first_table(
            "| fixed bulkhead, 25 calls |  690 |  690 |    810 |  0 |  36.82 ms |  38.17 ms |  25 |",
        )
        .unwrap();
        assert_eq!(first.guard, Guard::Bulkhead(25));
        assert_eq!(
            (first.run, first.p50_us, first.peak_in_flight),
            (1, 36_820.0, 25)
        );
        assert_eq!(
            Measured::parse_first_table("| client | goodput | a | b | c | d | e | f |"),
            None
        );
    }
}
