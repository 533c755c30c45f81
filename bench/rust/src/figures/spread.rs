//! A figure over several runs: its median, and the lowest and highest run.

use crate::stats::median;

/// The median, min and max of one figure over the runs that measured it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The median (the mean of the middle two for an even count).
    pub median: f64,
    /// The lowest run.
    pub min: f64,
    /// The highest run.
    pub max: f64,
    /// How many runs.
    pub runs: usize,
}

impl Spread {
    /// Over `values`, one per run; `None` without any finite value.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        let first = *values.first()?;
        Some(Spread {
            median: median(values.iter().copied()),
            min: values.iter().copied().fold(first, f64::min),
            max: values.iter().copied().fold(first, f64::max),
            runs: values.len(),
        })
    }

    /// `median (min–max)` with each written by `format`; the median alone for one run, or
    /// when every run reads the same.
    pub fn show(&self, format: impl Fn(f64) -> String) -> String {
        if self.runs < 2 || format(self.min) == format(self.max) {
            format(self.median)
        } else {
            format!(
                "{} ({}–{})",
                format(self.median),
                format(self.min),
                format(self.max)
            )
        }
    }
}

/// `median (min–max)` of `values` with `format`, or `—` without values.
pub(crate) fn show(
    values: impl IntoIterator<Item = f64>,
    format: impl Fn(f64) -> String,
) -> String {
    Spread::of(values).map_or_else(|| "—".to_owned(), |spread| spread.show(format))
}

/// The median of `values` with `format`, or `—` without values.
pub(crate) fn show_median(
    values: impl IntoIterator<Item = f64>,
    format: impl Fn(f64) -> String,
) -> String {
    Spread::of(values).map_or_else(|| "—".to_owned(), |spread| format(spread.median))
}

/// `n runs` or `one run`, for the line under a table.
pub(crate) fn runs_note(runs: usize) -> String {
    match runs {
        1 => "One run: a single measurement, not a median.".to_owned(),
        n => format!(
            "{n} runs; each figure is the median over them, min–max in brackets where shown."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_and_max_over_runs() {
        let spread = Spread::of([3.0, 1.0, 2.0, f64::NAN]).unwrap();
        assert_eq!(
            (spread.median, spread.min, spread.max, spread.runs),
            (2.0, 1.0, 3.0, 3)
        );
        assert_eq!(spread.show(|v| format!("{v:.1}")), "2.0 (1.0–3.0)");
        assert_eq!(Spread::of([5.0]).unwrap().show(|v| format!("{v}")), "5");
        assert_eq!(
            Spread::of([5.01, 4.99])
                .unwrap()
                .show(|v| format!("{v:.0}")),
            "5"
        );
        assert_eq!(show([], |v| format!("{v}")), "—");
    }
}
