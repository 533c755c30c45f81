//! Balancing settings: the policy, passive ejection, slow start and Peak-EWMA tuning.

use std::time::Duration;

/// How an instance is picked among the eligible ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Policy {
    /// Round robin from a random start (Spring's default). Lock-free, safe at counter wrap.
    #[default]
    RoundRobin,
    /// Uniformly random.
    Random,
    /// Smooth weighted round robin over the metadata `weight` as written: any number of at
    /// least 0, fractions included (`0.2`, `0.3`, `0.5` split the traffic 20/30/50), 1 when
    /// missing. Weight 0 takes no traffic (unless every instance weighs 0: then they share);
    /// a weight that is not such a number counts as 1 and is logged once, naming the
    /// instance. A stride schedule whose cost does not depend on the sum of the weights,
    /// interleaving picks (5:1:1 gives `a a b a c a a`, not `a a a a a b c`); a weight under
    /// 1/65,535 of the heaviest gets that share.
    Weighted,
    /// Power of two distinct random choices, keeping the one with fewer requests in flight.
    LeastRequest,
    /// Power of two distinct random choices by Peak-EWMA cost: latency estimate (peak-sensitive,
    /// decaying over [`PeakEwma::decay`]) times requests in flight plus one, with failures
    /// counted as slow so that an instance failing fast repels traffic.
    PeakEwma,
}

impl Policy {
    /// Every policy, in declaration order.
    pub const ALL: [Policy; 5] = [
        Policy::RoundRobin,
        Policy::Random,
        Policy::Weighted,
        Policy::LeastRequest,
        Policy::PeakEwma,
    ];
}

/// Passive ejection (outlier detection) of failing instances.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct Ejection {
    pub(crate) enabled: bool,
    pub(crate) consecutive_failures: u32,
    pub(crate) eject_on_connect_failure: bool,
    pub(crate) base_time: Duration,
    pub(crate) max_time: Duration,
    pub(crate) max_percent: f64,
}

impl Default for Ejection {
    fn default() -> Self {
        Ejection {
            enabled: true,
            consecutive_failures: 5,
            eject_on_connect_failure: true,
            base_time: Duration::from_secs(30),
            max_time: Duration::from_secs(300),
            max_percent: 10.0,
        }
    }
}

impl Ejection {
    /// The defaults: a connect failure ejects at once; 5 consecutive 5xx responses or timeouts
    /// eject for 30 s, doubling on each new ejection up to 5 min; at most max(1, 10 %) of the
    /// instances are ejected at a time.
    pub fn new() -> Self {
        Ejection::default()
    }

    /// No passive ejection at all.
    pub fn disabled() -> Self {
        Ejection {
            enabled: false,
            ..Ejection::default()
        }
    }

    /// Consecutive 5xx responses or failures that eject an instance (default 5; 0 is read as 1).
    pub fn consecutive_failures(mut self, n: u32) -> Self {
        self.consecutive_failures = n.max(1);
        self
    }

    /// Whether one connect failure ejects at once (default true).
    pub fn eject_on_connect_failure(mut self, yes: bool) -> Self {
        self.eject_on_connect_failure = yes;
        self
    }

    /// The first ejection's length (default 30 s); each further ejection doubles it.
    pub fn base_time(mut self, d: Duration) -> Self {
        self.base_time = d;
        self
    }

    /// The longest ejection (default 5 min).
    pub fn max_time(mut self, d: Duration) -> Self {
        self.max_time = d;
        self
    }

    /// The largest share of instances ejected at once, in percent (default 10; at least one
    /// instance may always be ejected). Clamped to 0..=100.
    pub fn max_percent(mut self, percent: f64) -> Self {
        self.max_percent = if percent.is_nan() {
            10.0
        } else {
            percent.clamp(0.0, 100.0)
        };
        self
    }
}

/// Slow start: a new or returning instance gets a growing share of traffic over a window.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct SlowStart {
    pub(crate) window: Duration,
    pub(crate) min_weight_percent: f64,
}

impl Default for SlowStart {
    fn default() -> Self {
        SlowStart {
            window: Duration::from_secs(30),
            min_weight_percent: 10.0,
        }
    }
}

impl SlowStart {
    /// A 30 s linear ramp starting at 10 % of the normal share (Envoy's defaults).
    pub fn new() -> Self {
        SlowStart::default()
    }

    /// No ramp: instances get their full share at once.
    pub fn disabled() -> Self {
        SlowStart {
            window: Duration::ZERO,
            ..SlowStart::default()
        }
    }

    /// The ramp's length (default 30 s; zero disables slow start).
    pub fn window(mut self, d: Duration) -> Self {
        self.window = d;
        self
    }

    /// The share at the start of the ramp, in percent (default 10, clamped to 1..=100).
    pub fn min_weight_percent(mut self, percent: f64) -> Self {
        self.min_weight_percent = if percent.is_nan() {
            10.0
        } else {
            percent.clamp(1.0, 100.0)
        };
        self
    }
}

/// Tuning of the [`Policy::PeakEwma`] cost.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct PeakEwma {
    pub(crate) decay: Duration,
    pub(crate) default_rtt: Duration,
    pub(crate) error_penalty: Duration,
}

impl Default for PeakEwma {
    fn default() -> Self {
        PeakEwma {
            decay: Duration::from_secs(10),
            default_rtt: Duration::from_millis(30),
            error_penalty: Duration::from_secs(1),
        }
    }
}

impl PeakEwma {
    /// Decay 10 s (Finagle, Linkerd, tower), a 30 ms estimate before the first response, and
    /// failures counted as 1 s responses.
    pub fn new() -> Self {
        PeakEwma::default()
    }

    /// How fast old latencies are forgotten (default 10 s; at least 1 ms).
    pub fn decay(mut self, d: Duration) -> Self {
        self.decay = d.max(Duration::from_millis(1));
        self
    }

    /// The estimate of an instance that has not answered yet (default 30 ms; at least 1 ms).
    pub fn default_rtt(mut self, d: Duration) -> Self {
        self.default_rtt = d.max(Duration::from_millis(1));
        self
    }

    /// The latency a failure (5xx, connect error, timeout) counts as, when it came back faster
    /// than that (default 1 s).
    pub fn error_penalty(mut self, d: Duration) -> Self {
        self.error_penalty = d;
        self
    }
}
