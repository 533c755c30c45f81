//! The fault plan: a timeline of faults and their recoveries, derived from the seed alone and
//! scaled to the fault window.
//!
//! The window is cut into periods; in every period three tracks each run one fault, so faults
//! overlap: the instance track stops or aborts one or two plain instances of a service and
//! restarts them; the proxy track puts one proxied instance in a faulting mode (latency, reset,
//! blackhole, half-open) and back; the registry track kills a registry node and restarts it on
//! its port, or makes one node answer slowly. Every fault ends within its period, so at least
//! [`PER_SERVICE`] − 3 instances of each service stay healthy throughout. A fourth track, no
//! fault, edits the callers' live configuration once per period.

use std::fmt;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::caller::SERVICES;
use crate::fleet::{PER_SERVICE, PROXIED};
use crate::proxy::Mode;
use crate::registries::NODES;
use crate::settings;

/// Shortest and longest period.
const PERIOD: (Duration, Duration) = (Duration::from_secs(8), Duration::from_secs(12));

/// One thing the fault runner does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Graceful stop of an instance (deregisters).
    Stop { service: usize, slot: usize },
    /// Abort of an instance: no deregistration, connections cut.
    Abort { service: usize, slot: usize },
    /// A fresh instance in the slot.
    Restart { service: usize, slot: usize },
    /// The proxy in front of a proxied instance switched to a mode.
    Proxy {
        service: usize,
        slot: usize,
        mode: Mode,
    },
    /// A registry node stopped at once.
    KillRegistry(usize),
    /// A registry node started again on its port.
    RestartRegistry(usize),
    /// A registry node answering slowly (`true`) or normally.
    SlowRegistry(usize, bool),
    /// The callers' configuration file edited to this version.
    Reconfigure(u64),
}

impl Action {
    /// Whether this starts a fault (rather than ending one).
    pub(crate) fn is_fault(self) -> bool {
        match self {
            Action::Stop { .. } | Action::Abort { .. } | Action::KillRegistry(_) => true,
            Action::Proxy { mode, .. } => mode != Mode::Pass,
            Action::SlowRegistry(_, slow) => slow,
            Action::Restart { .. } | Action::RestartRegistry(_) | Action::Reconfigure(_) => false,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Action::Stop { service, slot } => write!(f, "stop {}#{slot}", SERVICES[service]),
            Action::Abort { service, slot } => write!(f, "abort {}#{slot}", SERVICES[service]),
            Action::Restart { service, slot } => {
                write!(f, "restart {}#{slot}", SERVICES[service])
            }
            Action::Proxy {
                service,
                slot,
                mode,
            } => write!(f, "proxy of {}#{slot} -> {mode:?}", SERVICES[service]),
            Action::KillRegistry(node) => write!(f, "kill registry node {node}"),
            Action::RestartRegistry(node) => write!(f, "restart registry node {node}"),
            Action::SlowRegistry(node, true) => write!(
                f,
                "registry node {node} slow (+{} ms)",
                settings::REGISTRY_LATENCY.as_millis()
            ),
            Action::SlowRegistry(node, false) => write!(f, "registry node {node} normal speed"),
            Action::Reconfigure(version) => {
                write!(f, "callers' configuration edited to version {version}")
            }
        }
    }
}

/// An action and when it happens, from the start of the run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step {
    /// When.
    pub(crate) at: Duration,
    /// What.
    pub(crate) action: Action,
}

/// The faulting modes the proxy track cycles through.
const PROXY_MODES: [Mode; 4] = [
    Mode::Latency(settings::INSTANCE_LATENCY),
    Mode::Reset,
    Mode::Blackhole,
    Mode::HalfOpen,
];

/// The plan for faults between `from` and `to` (from the start of the run).
pub(crate) fn plan(seed: u64, from: Duration, to: Duration) -> Vec<Step> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut edits = SmallRng::seed_from_u64(seed ^ 0xed17_c0f1);
    let window = to.saturating_sub(from);
    let period = (window / 6).clamp(PERIOD.0, PERIOD.1);
    let periods = (window.as_secs_f64() / period.as_secs_f64()).floor() as u32;
    let mut steps = Vec::new();
    let mut modes = Vec::new();
    for p in 0..periods {
        let base = from + period * p;
        let window = |rng: &mut SmallRng| {
            let start = base + period.mul_f64(rng.random_range(0.0..0.2));
            (start, start + period.mul_f64(rng.random_range(0.4..0.7)))
        };

        // Instance track: stops and aborts alternate.
        let (start, end) = window(&mut rng);
        let service = rng.random_range(0..SERVICES.len());
        let mut plain: Vec<usize> = (PROXIED..PER_SERVICE).collect();
        plain.shuffle(&mut rng);
        let count = rng.random_range(1..=2);
        for &slot in &plain[..count] {
            let fault = if (p as u64 + seed) % 2 == 0 {
                Action::Stop { service, slot }
            } else {
                Action::Abort { service, slot }
            };
            steps.push(Step {
                at: start,
                action: fault,
            });
            let restart = Action::Restart { service, slot };
            steps.push(Step {
                at: end,
                action: restart,
            });
        }

        // Proxy track: every mode once per round of four, in a seeded order.
        if modes.is_empty() {
            modes = PROXY_MODES.to_vec();
            modes.shuffle(&mut rng);
        }
        let mode = modes.pop().unwrap_or(Mode::Reset);
        let (start, end) = window(&mut rng);
        let service = rng.random_range(0..SERVICES.len());
        let slot = rng.random_range(0..PROXIED);
        steps.push(Step {
            at: start,
            action: Action::Proxy {
                service,
                slot,
                mode,
            },
        });
        steps.push(Step {
            at: end,
            action: Action::Proxy {
                service,
                slot,
                mode: Mode::Pass,
            },
        });

        // Registry track: kills and slowness alternate.
        let (start, end) = window(&mut rng);
        let node = rng.random_range(0..NODES);
        let (fault, recovery) = if p % 2 == 0 {
            (Action::KillRegistry(node), Action::RestartRegistry(node))
        } else {
            (
                Action::SlowRegistry(node, true),
                Action::SlowRegistry(node, false),
            )
        };
        steps.push(Step {
            at: start,
            action: fault,
        });
        steps.push(Step {
            at: end,
            action: recovery,
        });

        // Live configuration track, on a generator of its own so the faults stay those of the
        // seed; version 1 is the callers' first.
        steps.push(Step {
            at: base + period.mul_f64(edits.random_range(0.0..1.0)),
            action: Action::Reconfigure(u64::from(p) + 2),
        });
    }
    steps.sort_by_key(|step| step.at);
    steps
}
