//! The goals the figures are held against, each checked where its table is rendered and
//! gathered into the `goals` tables (BENCHMARKS.md's "Goals", the README's performance table).

use crate::table::Table;

/// Which side of the target a figure must stay on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// At least this much.
    AtLeast(f64),
    /// At most this much.
    AtMost(f64),
    /// Under this.
    Below(f64),
}

impl Target {
    fn holds(self, value: f64) -> bool {
        match self {
            Target::AtLeast(target) => value >= target,
            Target::AtMost(target) => value <= target,
            Target::Below(target) => value < target,
        }
    }

    fn show(self, format: &dyn Fn(f64) -> String) -> String {
        match self {
            Target::AtLeast(target) => format!("≥ {}", format(target)),
            Target::AtMost(target) => format!("≤ {}", format(target)),
            Target::Below(target) => format!("< {}", format(target)),
        }
    }
}

impl Target {
    /// `≤ 1.03 met` or `≥ 0.97 MISSED`, for a table's goal column.
    pub(crate) fn verdict(self, value: f64, format: impl Fn(f64) -> String) -> String {
        let met = if self.holds(value) { "met" } else { "MISSED" };
        format!("{} {met}", self.show(&format))
    }
}

/// Goals being checked as a table is built: per goal, the medians held against it.
#[derive(Debug, Default)]
pub(crate) struct Checks(Vec<Check>);

/// One goal being checked.
#[derive(Debug)]
struct Check {
    what: String,
    target: Target,
    values: Vec<f64>,
    format: fn(f64) -> String,
}

impl Checks {
    /// Holds `value` against `target` under the goal `what`; returns the table's goal cell.
    pub(crate) fn add(
        &mut self,
        what: String,
        target: Target,
        value: f64,
        format: fn(f64) -> String,
    ) -> String {
        match self.0.iter_mut().find(|check| check.what == what) {
            Some(check) => check.values.push(value),
            None => self.0.push(Check {
                what,
                target,
                values: vec![value],
                format,
            }),
        }
        target.verdict(value, format)
    }

    /// Every goal.
    pub(crate) fn goals(self) -> Vec<Goal> {
        self.0
            .into_iter()
            .map(|check| Goal::check(check.what, &check.values, check.target, check.format))
            .collect()
    }
}

/// One goal checked against one run's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    /// What is measured.
    pub what: String,
    /// The figure, or the range of figures the goal applies to (one per concurrency, say).
    pub result: String,
    /// The target, written as a condition.
    pub target: String,
    /// Whether every figure met it.
    pub met: bool,
    /// The raw file the figures come from (set when the summary becomes a block).
    pub source: String,
}

impl Goal {
    /// Checks each of `values` (medians over runs) against `target`: met only if all are;
    /// the result shows their range, each written by `format`.
    pub fn check(
        what: impl Into<String>,
        values: &[f64],
        target: Target,
        format: impl Fn(f64) -> String,
    ) -> Goal {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let result = if values.is_empty() {
            "not measured".to_owned()
        } else if format(low) == format(high) {
            format(low)
        } else {
            format!("{}–{}", format(low), format(high))
        };
        Goal {
            what: what.into(),
            result,
            target: target.show(&format),
            met: !values.is_empty() && values.iter().all(|&value| target.holds(value)),
            source: String::new(),
        }
    }
}

/// Every goal with its result, whether it was met, and the raw file it comes from.
pub(crate) fn table(goals: &[Goal]) -> String {
    let mut table = Table::new(["what", "result", "goal", "verdict", "raw output"]).text_columns(5);
    for goal in goals {
        table.row([
            goal.what.clone(),
            goal.result.clone(),
            goal.target.clone(),
            if goal.met { "met" } else { "**missed**" }.to_owned(),
            format!("[{0}](bench/results/raw/{0})", goal.source),
        ]);
    }
    let missed = goals.iter().filter(|goal| !goal.met).count();
    format!(
        "{table}\n{missed} of {} goals missed, each figure the median over its run's repetitions \
         (its range over concurrencies or policies where it has several).\n",
        goals.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_goal_is_met_only_when_every_figure_meets_it() {
        let goal = Goal::check("ratio", &[0.98, 0.95], Target::AtLeast(0.97), |v| {
            format!("{v:.2}")
        });
        assert_eq!(
            (goal.result.as_str(), goal.target.as_str(), goal.met),
            ("0.95–0.98", "≥ 0.97", false)
        );
        let goal = Goal::check("n", &[2.0], Target::AtMost(3.0), |v| format!("{v}"));
        assert_eq!((goal.result.as_str(), goal.met), ("2", true));
        assert!(!Goal::check("none", &[], Target::Below(1.0), |v| format!("{v}")).met);
    }
}
