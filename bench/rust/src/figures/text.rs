//! Reading figures back out of the benchmarks' lines: `key=value` fields, a latency written as
//! `format_us` writes it (`92 µs`, `1.28 ms`, `3.10 s`), a Rust `Duration`'s `Debug` form
//! (`943.2ms`), and the rows of a Markdown table.

use std::time::Duration;

/// The value of `key=value` among the words of `line`.
pub(crate) fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .filter_map(|word| word.split_once('='))
        .find(|(name, _)| *name == key)
        .map(|(_, value)| value)
}

/// The number of `key=value` in `line`.
pub(crate) fn number(line: &str, key: &str) -> Option<f64> {
    field(line, key)?.parse().ok()
}

/// A latency in microseconds from a number and its unit (`µs`, `us`, `ms`, `s`, `ns`, `min`).
pub(crate) fn micros(value: &str, unit: &str) -> Option<f64> {
    let value: f64 = value.parse().ok()?;
    let scale = match unit.trim_end_matches([',', ';']) {
        "ns" => 0.001,
        "µs" | "us" => 1.0,
        "ms" => 1_000.0,
        "s" => 1_000_000.0,
        "min" => 60_000_000.0,
        _ => return None,
    };
    Some(value * scale)
}

/// The latency written after the word `label` in `line` (`p99 1.28 ms`), in microseconds.
pub(crate) fn micros_after(line: &str, label: &str) -> Option<f64> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|word| word.trim_end_matches(':') == label)?;
    micros(words.get(at + 1)?, words.get(at + 2)?)
}

/// The number written after the words `label` in `line` (`errors 0`, `picks/call 1.0000`).
pub(crate) fn number_after(line: &str, label: &str) -> Option<f64> {
    let (_, rest) = line.split_once(label)?;
    rest.trim_start_matches([' ', ':'])
        .split([' ', ',', ';'])
        .find(|word| !word.is_empty())?
        .parse()
        .ok()
}

/// A Rust `Duration` from its `Debug` form (`943.200013ms`, `3.6s`, `0ns`, `12.5µs`), exactly.
pub(crate) fn debug_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (value, unit) = text.split_at(split);
    let scale: u128 = match unit {
        "ns" => 1,
        "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return None,
    };
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    let mut nanos = whole.parse::<u128>().ok()? * scale;
    if !fraction.is_empty() {
        let digits = u32::try_from(fraction.len()).ok()?;
        nanos += fraction.parse::<u128>().ok()? * scale / 10u128.checked_pow(digits)?;
    }
    Some(Duration::from_nanos(u64::try_from(nanos).ok()?))
}

/// The cells of a Markdown table row (`| a | b |`), trimmed; `None` for any other line and for
/// the line under the header.
pub(crate) fn table_cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
    let rule = cells
        .iter()
        .all(|cell| !cell.is_empty() && cell.chars().all(|c| matches!(c, '-' | ':')));
    (!rule).then_some(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_latencies_and_durations() {
        let line = "round 2 c=16 raw sample calls=5000 errors=0";
        assert_eq!(field(line, "c"), Some("16"));
        assert_eq!(number(line, "calls"), Some(5000.0));
        assert_eq!(field(line, "cpu_ns"), None);
        let line = "  run 1 c=64  raw reqwest  47394 req/s  p50   1.28 ms  p99   2.68 ms  errors 0";
        assert_eq!(micros_after(line, "p50"), Some(1280.0));
        assert_eq!(micros_after(line, "p99"), Some(2680.0));
        assert_eq!(number_after(line, "errors"), Some(0.0));
        assert_eq!(
            number_after("picks/call 1.0508, hedges", "picks/call"),
            Some(1.0508)
        );
        for duration in [
            Duration::from_nanos(943_200_013),
            Duration::from_micros(157_061),
            Duration::from_nanos(3_633_808_562),
            Duration::ZERO,
            Duration::from_nanos(12_500),
        ] {
            assert_eq!(debug_duration(&format!("{duration:?}")), Some(duration));
        }
        assert_eq!(debug_duration("ms"), None);
    }

    #[test]
    fn reads_table_rows_but_not_rules() {
        assert_eq!(
            table_cells("| Stream    | 1   |    0.80 |"),
            Some(vec!["Stream", "1", "0.80"])
        );
        assert_eq!(table_cells("|-----------|-----|--------:|"), None);
        assert_eq!(table_cells("not a row"), None);
    }
}
