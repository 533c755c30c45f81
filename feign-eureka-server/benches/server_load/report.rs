//! What a run measured, one line per registry and run, and the summary: a Markdown table of
//! medians over runs and the ratios between the registries.

use std::time::Duration;

use feign_bench::memory::Resident;
use feign_bench::stats::{format_us, median};

use crate::load::{Mixed, Outcome, Plan};
use crate::servers::Kind;

/// One registry's figures in one run.
#[derive(Debug, Clone)]
pub(crate) struct Measured {
    /// Which registry.
    pub(crate) kind: Kind,
    /// Registering every instance.
    pub(crate) registration: Duration,
    /// Registrations that failed.
    pub(crate) registration_errors: u64,
    /// A full fetch's gzipped size, after registering.
    pub(crate) full_bytes: Option<usize>,
    /// The measured renewals and fetches.
    pub(crate) mixed: Mixed,
    /// The server's memory once started.
    pub(crate) started: Option<Resident>,
    /// After registering.
    pub(crate) registered: Option<Resident>,
    /// After the measured load (its `peak_kb` is the process's peak so far).
    pub(crate) loaded: Option<Resident>,
    /// The server's CPU time while registering.
    pub(crate) registration_cpu: Option<Duration>,
    /// The server's CPU time during the measured load.
    pub(crate) load_cpu: Option<Duration>,
    /// The measured load's length in seconds.
    pub(crate) secs: f64,
}

impl Measured {
    /// The run's figures on one line.
    pub(crate) fn line(&self) -> String {
        format!(
            "{}: registered in {:.2} s ({} errors, {} s CPU), full fetch {} bytes gzipped; renewals {}; fetches {}; {} s CPU under load; RSS {} MiB started, {} MiB registered, {} MiB after load, peak {} MiB",
            self.kind.name(),
            self.registration.as_secs_f64(),
            self.registration_errors,
            secs(self.registration_cpu),
            self.full_bytes.map_or("FAILED".to_owned(), |b| b.to_string()),
            self.outcome(&self.mixed.renewals),
            self.outcome(&self.mixed.fetches),
            secs(self.load_cpu),
            mib(self.started.map(|r| r.rss_kb)),
            mib(self.registered.map(|r| r.rss_kb)),
            mib(self.loaded.map(|r| r.rss_kb)),
            mib(self.loaded.map(|r| r.peak_kb)),
        )
    }

    fn outcome(&self, o: &Outcome) -> String {
        let l = &o.latencies;
        format!(
            "{:.1}/s p50 {} p99 {} max {} errors {}",
            l.len() as f64 / self.secs,
            us(l.p50_us()),
            us(l.p99_us()),
            us(l.max_us()),
            o.errors
        )
    }
}

/// Prints a Markdown table of each registry's medians over its runs, then the ratios.
pub(crate) fn summary(all: &[Measured], plan: Plan) {
    println!(
        "\nmedians over runs ({} instances; {} renewals/s and {} full fetches/s for {:?}):\n",
        plan.instances, plan.renewals, plan.fetches, plan.duration
    );
    println!("| registry | runs | registration (server CPU) | renewals p50 / p99 / max | fetches p50 / p99 / max | errors (register / renew / fetch) | achieved renewals/s, fetches/s | server CPU under load | RSS started / registered / after load | peak RSS |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut medians = Vec::new();
    for kind in [Kind::Embedded, Kind::Spring] {
        let runs: Vec<&Measured> = all.iter().filter(|m| m.kind == kind).collect();
        if runs.is_empty() {
            continue;
        }
        let m = Medians::of(&runs);
        println!(
            "| {} | {} | {:.2} s ({:.2} s) | {} / {} / {} | {} / {} / {} | {} / {} / {} | {:.0}, {:.0} | {:.2} s | {} / {} / {} MiB | {} MiB |",
            kind.name(),
            runs.len(),
            m.registration_s,
            m.registration_cpu_s,
            format_us(m.renew[0]), format_us(m.renew[1]), format_us(m.renew[2]),
            format_us(m.fetch[0]), format_us(m.fetch[1]), format_us(m.fetch[2]),
            m.errors[0], m.errors[1], m.errors[2],
            m.rates[0], m.rates[1],
            m.load_cpu_s,
            mib_f(m.rss_kb[0]), mib_f(m.rss_kb[1]), mib_f(m.rss_kb[2]),
            mib_f(m.peak_kb),
        );
        medians.push(m);
    }
    if let [embedded, spring] = medians.as_slice() {
        println!();
        for (what, e, s) in [
            ("renewals p99", embedded.renew[1], spring.renew[1]),
            ("fetches p99", embedded.fetch[1], spring.fetch[1]),
        ] {
            let ratio = s / e.max(1.0);
            println!(
                "{what}: Spring / embedded = {ratio:.1}x (goal >= 5x: {})",
                if ratio >= 5.0 { "met" } else { "MISSED" }
            );
        }
        // Below 0.05 s (five of /proc's ticks) a CPU time is too coarse to divide by.
        let cpu_ratio = |e: f64, s: f64| {
            if e >= 0.05 {
                format!("{:.1}x", s / e)
            } else {
                format!("n/a (embedded {e:.2} s)")
            }
        };
        println!(
            "server CPU: Spring / embedded = {} under load, {} registering",
            cpu_ratio(embedded.load_cpu_s, spring.load_cpu_s),
            cpu_ratio(embedded.registration_cpu_s, spring.registration_cpu_s),
        );
        for (what, e, s) in [
            ("RSS after load", embedded.rss_kb[2], spring.rss_kb[2]),
            ("peak RSS", embedded.peak_kb, spring.peak_kb),
        ] {
            let fraction = e / s.max(1.0);
            println!(
                "{what}: embedded / Spring = {fraction:.3} = 1/{:.0} (goal <= 1/10: {})",
                1.0 / fraction.max(f64::EPSILON),
                if fraction <= 0.1 { "met" } else { "MISSED" }
            );
        }
    }
}

/// One registry's medians over its runs (errors are summed).
struct Medians {
    registration_s: f64,
    registration_cpu_s: f64,
    load_cpu_s: f64,
    /// p50, p99, max in µs.
    renew: [f64; 3],
    fetch: [f64; 3],
    /// Registrations, renewals, fetches that failed, over all runs.
    errors: [u64; 3],
    /// Achieved renewals/s and fetches/s.
    rates: [f64; 2],
    /// Started, registered, after load.
    rss_kb: [f64; 3],
    peak_kb: f64,
}

impl Medians {
    fn of(runs: &[&Measured]) -> Medians {
        let med = |f: &dyn Fn(&Measured) -> f64| median(runs.iter().map(|m| f(m)));
        let quantiles = |pick: fn(&Mixed) -> &Outcome| {
            [
                med(&|m| f64::from(pick(&m.mixed).latencies.p50_us())),
                med(&|m| f64::from(pick(&m.mixed).latencies.p99_us())),
                med(&|m| f64::from(pick(&m.mixed).latencies.max_us())),
            ]
        };
        let rss = |pick: fn(&Measured) -> Option<Resident>| {
            med(&|m| pick(m).map_or(f64::NAN, |r| r.rss_kb as f64))
        };
        Medians {
            registration_s: med(&|m| m.registration.as_secs_f64()),
            registration_cpu_s: med(&|m| m.registration_cpu.map_or(f64::NAN, |d| d.as_secs_f64())),
            load_cpu_s: med(&|m| m.load_cpu.map_or(f64::NAN, |d| d.as_secs_f64())),
            renew: quantiles(|m| &m.renewals),
            fetch: quantiles(|m| &m.fetches),
            errors: [
                runs.iter().map(|m| m.registration_errors).sum(),
                runs.iter().map(|m| m.mixed.renewals.errors).sum(),
                runs.iter().map(|m| m.mixed.fetches.errors).sum(),
            ],
            rates: [
                med(&|m| m.mixed.renewals.latencies.len() as f64 / m.secs),
                med(&|m| m.mixed.fetches.latencies.len() as f64 / m.secs),
            ],
            rss_kb: [rss(|m| m.started), rss(|m| m.registered), rss(|m| m.loaded)],
            peak_kb: med(&|m| m.loaded.map_or(f64::NAN, |r| r.peak_kb as f64)),
        }
    }
}

fn secs(duration: Option<Duration>) -> String {
    duration.map_or("?".to_owned(), |d| format!("{:.2}", d.as_secs_f64()))
}

fn us(value: u32) -> String {
    format_us(f64::from(value))
}

fn mib(kb: Option<u64>) -> String {
    kb.map_or("?".to_owned(), |kb| mib_f(kb as f64))
}

fn mib_f(kb: f64) -> String {
    format!("{:.1}", kb / 1024.0)
}

/// `/proc/loadavg`'s first three figures, or `?`.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}
