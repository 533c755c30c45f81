//! Durations as Spring Boot reads them: `500` (in the property's unit), `500ms`, `5s`, `2m`,
//! `1h`, `1d`, `10us`, `10ns`, or ISO-8601 `PT5S`, `PT1M30S`, `P1DT2H`, `PT0.5S`.

use std::time::Duration;

/// The unit of a plain number, which Spring fixes per property (`@DurationUnit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DurationUnit {
    /// Milliseconds: Spring's default, and OpenFeign's timeouts.
    Millis,
    /// Seconds: Eureka's `…-seconds` properties.
    Seconds,
}

/// Parses a duration; `Err` says what was expected.
pub(crate) fn parse(text: &str, unit: DurationUnit) -> Result<Duration, &'static str> {
    const EXPECTED: &str =
        "expected a duration: a number (in the property's unit), `500ms`, `5s`, `2m`, `1h`, `1d`, or ISO-8601 like `PT5S`";
    let text = text.trim();
    if text.starts_with(['P', 'p']) {
        return iso8601(&text[1..]).ok_or(EXPECTED);
    }
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(EXPECTED);
    }
    let amount: u64 = text[..digits].parse().map_err(|_| EXPECTED)?;
    let duration = match text[digits..].trim().to_ascii_lowercase().as_str() {
        "" => match unit {
            DurationUnit::Millis => Some(Duration::from_millis(amount)),
            DurationUnit::Seconds => Some(Duration::from_secs(amount)),
        },
        "ns" => Some(Duration::from_nanos(amount)),
        "us" => Some(Duration::from_micros(amount)),
        "ms" => Some(Duration::from_millis(amount)),
        "s" => Some(Duration::from_secs(amount)),
        "m" => amount.checked_mul(60).map(Duration::from_secs),
        "h" => amount.checked_mul(3_600).map(Duration::from_secs),
        "d" => amount.checked_mul(86_400).map(Duration::from_secs),
        _ => None,
    };
    duration.ok_or(EXPECTED)
}

/// The part after `P`: `[nD][T[nH][nM][n[.f]S]]`, at least one component.
fn iso8601(rest: &str) -> Option<Duration> {
    let (date, time) = match rest.find(['T', 't']) {
        Some(t) => (&rest[..t], Some(&rest[t + 1..])),
        None => (rest, None),
    };
    let mut total = Duration::ZERO;
    let mut any = false;
    if !date.is_empty() {
        let days: u64 = date.strip_suffix(['D', 'd'])?.parse().ok()?;
        total = total.checked_add(Duration::from_secs(days.checked_mul(86_400)?))?;
        any = true;
    }
    if let Some(mut time) = time {
        if time.is_empty() {
            return None;
        }
        for (suffix, seconds) in [('H', 3_600u64), ('M', 60)] {
            if let Some(at) = time.find([suffix, suffix.to_ascii_lowercase()]) {
                let n: u64 = time[..at].parse().ok()?;
                total = total.checked_add(Duration::from_secs(n.checked_mul(seconds)?))?;
                time = &time[at + 1..];
                any = true;
            }
        }
        if !time.is_empty() {
            let secs = time.strip_suffix(['S', 's'])?;
            let (whole, fraction) = secs.split_once('.').unwrap_or((secs, ""));
            total = total.checked_add(Duration::from_secs(whole.parse().ok()?))?;
            if !fraction.is_empty() {
                if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let nanos: u32 = format!("{fraction:0<9}").parse().ok()?;
                total = total.checked_add(Duration::from_nanos(u64::from(nanos)))?;
            }
            any = true;
        }
    }
    any.then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spring_forms_parse() {
        let ms = DurationUnit::Millis;
        assert_eq!(parse("5000", ms), Ok(Duration::from_millis(5000)));
        assert_eq!(
            parse("5", DurationUnit::Seconds),
            Ok(Duration::from_secs(5))
        );
        assert_eq!(parse("250ms", ms), Ok(Duration::from_millis(250)));
        assert_eq!(parse("5s", ms), Ok(Duration::from_secs(5)));
        assert_eq!(parse("2m", ms), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1h", ms), Ok(Duration::from_secs(3_600)));
        assert_eq!(parse("1d", ms), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse("PT5S", ms), Ok(Duration::from_secs(5)));
        assert_eq!(parse("pt1m30s", ms), Ok(Duration::from_secs(90)));
        assert_eq!(parse("P1DT2H", ms), Ok(Duration::from_secs(93_600)));
        assert_eq!(parse("PT0.25S", ms), Ok(Duration::from_millis(250)));
        for bad in [
            "",
            "soon",
            "-5",
            "5 sec",
            "5x",
            "P",
            "PT",
            "PTS",
            "P1",
            "PT1.0000000001S",
            "99999999999999999999d",
            // Parts that fit each on its own but not their sum.
            "P213503982334601DT421M",
            "PT5124095576030431H3600S",
            "PT1H18446744073709551615S",
        ] {
            assert!(parse(bad, ms).is_err(), "{bad}");
        }
    }
}
