//! The `freshness` benchmark's setups, lines and table: per setup and run, how long a
//! registration, a deregistration and a death took to reach a client and its calls. A run's
//! line is its [`Outcome`]'s `Debug` form; runs before push discovery printed no `listed` or
//! `unlisted`, and their table has no such columns.

use std::fmt;
use std::time::Duration;

use super::goals::{Checks, Target};
use super::text::debug_duration;
use super::{Block, Error, RawFile, Result, Summary};
use crate::table::Table;

/// A registry and the timings of everything talking to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Setup {
    /// The embedded registry and the client with Eureka's default timings.
    EmbeddedDefaults,
    /// Both tuned: 1 s fetches and renewals, a 3 s lease, no read-only cache.
    EmbeddedTuned,
    /// Push discovery: the client watches the embedded registry (and would poll every 30 s).
    EmbeddedPush,
    /// Spring Cloud Netflix Eureka's server with its defaults.
    SpringDefaults,
    /// Spring's server tuned as the embedded one.
    SpringTuned,
}

impl Setup {
    /// Every setup, in table order.
    pub const ALL: [Setup; 5] = [
        Setup::EmbeddedDefaults,
        Setup::EmbeddedTuned,
        Setup::EmbeddedPush,
        Setup::SpringDefaults,
        Setup::SpringTuned,
    ];

    /// Which registry, in tables.
    pub fn registry(self) -> &'static str {
        match self {
            Setup::EmbeddedDefaults | Setup::EmbeddedTuned | Setup::EmbeddedPush => {
                "embedded (feign-eureka)"
            }
            Setup::SpringDefaults | Setup::SpringTuned => "Spring Cloud Netflix Eureka",
        }
    }

    /// Its timings, in tables.
    pub fn settings(self) -> &'static str {
        match self {
            Setup::EmbeddedDefaults => "defaults",
            Setup::SpringDefaults => "Spring defaults",
            Setup::EmbeddedTuned => "tuned, exact lease expiry",
            Setup::SpringTuned => "tuned",
            Setup::EmbeddedPush => "push (watch), tuned leases",
        }
    }

    /// Short leases and no registration jitter.
    pub fn tuned(self) -> bool {
        matches!(
            self,
            Setup::EmbeddedTuned | Setup::SpringTuned | Setup::EmbeddedPush
        )
    }

    /// How often the discovery client fetches the registry (Eureka's default 30 s); with push
    /// only when the watch fails.
    pub fn fetch_interval(self) -> Duration {
        if self.tuned() && self != Setup::EmbeddedPush {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(30)
        }
    }

    /// The span the runs' events are spread over: the client's fetch timer, or with push, whose
    /// timer is the registry's change, one second.
    pub fn phase_span(self) -> Duration {
        if self == Setup::EmbeddedPush {
            Duration::from_secs(1)
        } else {
            self.fetch_interval()
        }
    }
}

/// What one run measured; `None` means the cap was reached.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    /// From starting each instance's registration to the first call it answered.
    pub register: Vec<Option<Duration>>,
    /// From starting an instance's registration to the client listing it.
    pub listed: Vec<Option<Duration>>,
    /// From starting a deregistration to the last call the instance answered.
    pub deregister: Option<Duration>,
    /// From starting the deregistration to the client no longer listing it.
    pub unlisted: Option<Duration>,
    /// From killing an instance to the client no longer listing it.
    pub died: Option<Duration>,
    /// Calls that failed after the kill.
    pub errors_after_kill: usize,
}

/// One run of one setup.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The setup.
    pub setup: Setup,
    /// Which run, from 1.
    pub run: usize,
    /// What it measured.
    pub outcome: Outcome,
}

/// `  EmbeddedTuned run 1: Outcome { register: [Some(938.8ms), ...], ... }`.
impl fmt::Display for Measured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "  {:?} run {}: {:?}", self.setup, self.run, self.outcome)
    }
}

impl Measured {
    /// Reads a line as [`Display`](fmt::Display) writes it, or as runs before push did.
    pub fn parse(line: &str) -> Option<Measured> {
        let (head, outcome) = line.trim().split_once(": Outcome { ")?;
        let (setup, run) = head.split_once(" run ")?;
        let setup = Setup::ALL.into_iter().find(|s| format!("{s:?}") == setup)?;
        let list = |name: &str| -> Option<Vec<Option<Duration>>> {
            let (_, rest) = outcome.split_once(&format!("{name}: ["))?;
            let (items, _) = rest.split_once(']')?;
            items.split(", ").map(optional_duration).collect()
        };
        let single = |name: &str| -> Option<Option<Duration>> {
            let (_, rest) = outcome.split_once(&format!(" {name}: "))?;
            optional_duration(rest.split([',', ' ']).next()?)
        };
        Some(Measured {
            setup,
            run: run.parse().ok()?,
            outcome: Outcome {
                register: list("register")?,
                listed: list("listed").unwrap_or_default(),
                deregister: single("deregister")?,
                unlisted: single("unlisted").flatten(),
                died: single("died")?,
                errors_after_kill: outcome
                    .split_once("errors_after_kill: ")?
                    .1
                    .split([' ', '}'])
                    .next()?
                    .parse()
                    .ok()?,
            },
        })
    }
}

/// `Some(1.5ms)` or `None`, as `Debug` writes an `Option<Duration>`.
fn optional_duration(text: &str) -> Option<Option<Duration>> {
    if text == "None" {
        return Some(None);
    }
    let inner = text.strip_prefix("Some(")?.strip_suffix(')')?;
    Some(Some(debug_duration(inner)?))
}

/// What one `freshness` output measured: its runs, its cap on waits, and whether feign-lb's
/// slow start was on.
#[derive(Debug, Clone)]
pub struct Freshness {
    /// Every run of every setup.
    pub runs: Vec<Measured>,
    /// The longest any wait could take.
    pub cap: Duration,
    /// Whether new instances ramped up their share of calls (feign-lb's default).
    pub slow_start: bool,
}

/// Every run of one `freshness` output, and how it was set up.
pub fn read(file: &RawFile) -> Result<Freshness> {
    let measured: Vec<Measured> = file.lines().filter_map(Measured::parse).collect();
    if measured.is_empty() {
        return Err(Error::new(format!("{}: no run line", file.name())));
    }
    let cap = file
        .lines()
        .find_map(|line| {
            let (_, rest) = line.split_once("waits capped at ")?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .map(Duration::from_secs)
        .ok_or_else(|| Error::new(format!("{}: no `waits capped at` line", file.name())))?;
    Ok(Freshness {
        runs: measured,
        cap,
        slow_start: !file.lines().any(|line| line.contains(SLOW_START_OFF)),
    })
}

/// What a run with feign-lb's slow start off says in its summary.
const SLOW_START_OFF: &str = "slow start off";

/// Median (min – max) per setup and event.
pub fn block(file: &RawFile) -> Result<Block> {
    Ok(summary(&read(file)?)
        .with_setup(file, "freshness: ")
        .into_block(&[file]))
}

/// [`block`] of runs already read.
pub fn summary(freshness: &Freshness) -> Summary {
    let (measured, cap) = (&freshness.runs, freshness.cap);
    let slow_start = if freshness.slow_start {
        ""
    } else {
        " (feign-lb's slow start off)"
    };
    let listing = measured.iter().any(|m| !m.outcome.listed.is_empty());
    let mut header = vec!["registry", "settings"];
    if listing {
        header.push("register → listed");
    }
    header.push("register → first call");
    if listing {
        header.push("deregister → unlisted");
    }
    header.extend([
        "deregister → last call",
        "died → dropped by client",
        "caller errors after kill",
        "runs",
    ]);
    let mut table = Table::new(header).text_columns(2);
    let mut checks = Checks::default();
    for setup in Setup::ALL {
        let runs: Vec<&Outcome> = measured
            .iter()
            .filter(|m| m.setup == setup)
            .map(|m| &m.outcome)
            .collect();
        if runs.is_empty() {
            continue;
        }
        let listed: Vec<_> = runs.iter().flat_map(|o| o.listed.clone()).collect();
        let unlisted: Vec<_> = runs.iter().map(|o| o.unlisted).collect();
        let mut row = vec![setup.registry().to_owned(), setup.settings().to_owned()];
        if listing {
            row.push(spread(&listed, cap));
        }
        row.push(spread(
            &runs
                .iter()
                .flat_map(|o| o.register.clone())
                .collect::<Vec<_>>(),
            cap,
        ));
        if listing {
            row.push(spread(&unlisted, cap));
        }
        row.extend([
            spread(&runs.iter().map(|o| o.deregister).collect::<Vec<_>>(), cap),
            spread(&runs.iter().map(|o| o.died).collect::<Vec<_>>(), cap),
            runs.iter()
                .map(|o| o.errors_after_kill)
                .sum::<usize>()
                .to_string(),
            runs.len().to_string(),
        ]);
        table.row(row);
        if setup == Setup::EmbeddedPush && listing {
            for (what, samples) in [
                (
                    "a registration reaching a watching client's list, slowest of all runs",
                    &listed,
                ),
                (
                    "a deregistration reaching a watching client's list, slowest of all runs",
                    &unlisted,
                ),
            ] {
                let slowest = samples
                    .iter()
                    .map(|s| s.unwrap_or(cap).as_secs_f64() * 1e3)
                    .fold(0.0, f64::max);
                checks.add(
                    format!("{what}{slow_start}"),
                    Target::AtMost(100.0),
                    slowest,
                    |ms| format!("{ms:.0} ms"),
                );
            }
        }
    }
    Summary::new(
        table,
        format!(
            "Median (min – max) over the runs, every sample counted (three registrations per \
             run); a wait that reached the cap of {} shows as \"> {}\". The setups run at the \
             same time.{}",
            human(cap),
            human(cap),
            if freshness.slow_start {
                String::new()
            } else {
                format!(" New instances got their full share at once: {SLOW_START_OFF}.")
            }
        ),
    )
    .with_goals(checks.goals())
}

/// `median (min – max)`, with capped waits counted as longer than everything else.
fn spread(samples: &[Option<Duration>], cap: Duration) -> String {
    if samples.is_empty() {
        return "—".to_owned();
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by_key(|sample| sample.unwrap_or(Duration::MAX));
    let show = |sample: Option<Duration>| sample.map_or_else(|| format!("> {}", human(cap)), human);
    format!(
        "{} ({} – {})",
        show(sorted[sorted.len() / 2]),
        show(sorted[0]),
        show(sorted[sorted.len() - 1])
    )
}

/// `3.0 min`, `27 s`, `3.21 s`, `541 ms`.
fn human(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs >= 120.0 {
        format!("{:.1} min", secs / 60.0)
    } else if secs >= 10.0 {
        format!("{secs:.0} s")
    } else if secs >= 1.0 {
        format!("{secs:.2} s")
    } else {
        format!("{} ms", duration.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back_in_both_forms() {
        let old = Measured::parse(
            "  SpringDefaults run 3: Outcome { register: [Some(15.013210225s), Some(45.1s)], deregister: Some(14.687156547s), died: None, errors_after_kill: 2 }",
        )
        .unwrap();
        assert_eq!(old.setup, Setup::SpringDefaults);
        assert_eq!(old.outcome.register[1], Some(Duration::from_millis(45_100)));
        assert_eq!((old.outcome.died, old.outcome.errors_after_kill), (None, 2));
        assert!(old.outcome.listed.is_empty());
        let new = Measured {
            setup: Setup::EmbeddedPush,
            run: 1,
            outcome: Outcome {
                register: vec![Some(Duration::from_micros(157_061)), None],
                listed: vec![Some(Duration::from_micros(3_989))],
                deregister: Some(Duration::ZERO),
                unlisted: Some(Duration::from_micros(2_778)),
                died: Some(Duration::from_millis(3_633)),
                errors_after_kill: 0,
            },
        };
        assert_eq!(Measured::parse(&new.to_string()), Some(new));
    }

    #[test]
    fn capped_waits_count_as_the_longest() {
        let cap = Duration::from_secs(180);
        let samples = [
            None,
            Some(Duration::from_secs(1)),
            Some(Duration::from_secs(2)),
        ];
        assert_eq!(spread(&samples, cap), "2.00 s (1.00 s – > 3.0 min)");
    }
}
