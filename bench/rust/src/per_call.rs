//! What the `per-call` benchmark's processes share: the variants under test and the one-line
//! record a client process prints for the orchestrator.
//!
//! A client process makes a fixed number of calls after a warm-up and reports what the measured
//! calls cost it: CPU time (user + system, every thread of the process), wall time, and heap
//! allocations. Instruction counts come from running the same process under valgrind twice
//! with different call counts, so that start-up and warm-up cancel out.

use std::fmt;
use std::str::FromStr;

/// One way of making the benchmark's call, `GET /orders/{id}` decoded into an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// reqwest alone, first port.
    Raw,
    /// A `#[feign_client]` with a fixed URL, first port.
    FeignFixed,
    /// reqwest alone, the three ports in turn through one pool.
    RawRotating,
    /// feign + load balancer over a static list of the three ports, round robin.
    FeignStatic,
    /// feign + load balancer fed by a Eureka client of the server process's registry.
    FeignEureka,
    /// reqwest behind reqwest-middleware with reqwest-retry and reqwest-tracing, first port.
    Middleware,
    /// reqwest behind feign-lb's `LoadBalancedMiddleware` over the static list of the three
    /// ports, round robin: the balancer for any HTTP call.
    LbMiddleware,
    /// The feignhttp crate's declarative client, first port (built with `--features feignhttp`).
    Feignhttp,
}

impl Variant {
    /// Every variant, in table order.
    pub const ALL: [Variant; 8] = [
        Variant::Raw,
        Variant::FeignFixed,
        Variant::RawRotating,
        Variant::FeignStatic,
        Variant::FeignEureka,
        Variant::Middleware,
        Variant::LbMiddleware,
        Variant::Feignhttp,
    ];

    /// The short name used on the command line and in raw output.
    pub fn key(self) -> &'static str {
        match self {
            Variant::Raw => "raw",
            Variant::FeignFixed => "feign",
            Variant::RawRotating => "raw3",
            Variant::FeignStatic => "lb",
            Variant::FeignEureka => "eureka",
            Variant::Middleware => "middleware",
            Variant::LbMiddleware => "lb-middleware",
            Variant::Feignhttp => "feignhttp",
        }
    }

    /// The name in tables.
    pub fn label(self) -> &'static str {
        match self {
            Variant::Raw => "raw reqwest",
            Variant::FeignFixed => "feign, fixed URL",
            Variant::RawRotating => "raw reqwest, 3 ports in turn",
            Variant::FeignStatic => "feign + LB (static list)",
            Variant::FeignEureka => "feign + LB + Eureka",
            Variant::Middleware => "reqwest-middleware + retry + tracing",
            Variant::LbMiddleware => "reqwest + LoadBalancedMiddleware (static list)",
            Variant::Feignhttp => "feignhttp 0.6",
        }
    }

    /// The variant this one is held against: raw reqwest on the same ports.
    pub fn baseline(self) -> Variant {
        match self {
            Variant::FeignStatic
            | Variant::FeignEureka
            | Variant::RawRotating
            | Variant::LbMiddleware => Variant::RawRotating,
            _ => Variant::Raw,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl FromStr for Variant {
    type Err = String;

    fn from_str(key: &str) -> Result<Variant, String> {
        Variant::ALL
            .into_iter()
            .find(|variant| variant.key() == key)
            .ok_or_else(|| format!("unknown variant `{key}`"))
    }
}

/// What one client process measured over its counted calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Calls counted (after the warm-up).
    pub calls: u64,
    /// Counted calls that failed.
    pub errors: u64,
    /// CPU time of the whole process over the counted calls, in nanoseconds.
    pub cpu_ns: u64,
    /// Wall time over the counted calls, in nanoseconds.
    pub wall_ns: u64,
    /// Heap allocations over the counted calls (reallocations included).
    pub allocations: u64,
    /// Bytes allocated over the counted calls.
    pub allocated_bytes: u64,
}

impl Sample {
    /// CPU time per call in microseconds.
    pub fn cpu_us_per_call(&self) -> f64 {
        self.cpu_ns as f64 / 1_000.0 / self.calls.max(1) as f64
    }

    /// Successful calls per second of wall time.
    pub fn calls_per_second(&self) -> f64 {
        self.calls.saturating_sub(self.errors) as f64 * 1e9 / self.wall_ns.max(1) as f64
    }

    /// Allocations per call.
    pub fn allocations_per_call(&self) -> f64 {
        self.allocations as f64 / self.calls.max(1) as f64
    }

    /// Bytes allocated per call.
    pub fn bytes_per_call(&self) -> f64 {
        self.allocated_bytes as f64 / self.calls.max(1) as f64
    }
}

/// The line a client process prints: `sample calls=N errors=N cpu_ns=N wall_ns=N allocs=N
/// bytes=N`.
impl fmt::Display for Sample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sample calls={} errors={} cpu_ns={} wall_ns={} allocs={} bytes={}",
            self.calls,
            self.errors,
            self.cpu_ns,
            self.wall_ns,
            self.allocations,
            self.allocated_bytes
        )
    }
}

impl FromStr for Sample {
    type Err = String;

    fn from_str(line: &str) -> Result<Sample, String> {
        let fields = line
            .strip_prefix("sample ")
            .ok_or_else(|| format!("not a sample line: {line:?}"))?;
        let field = |name: &str| -> Result<u64, String> {
            fields
                .split_whitespace()
                .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
                .ok_or_else(|| format!("no `{name}` in {line:?}"))?
                .parse()
                .map_err(|err| format!("`{name}` in {line:?}: {err}"))
        };
        Ok(Sample {
            calls: field("calls")?,
            errors: field("errors")?,
            cpu_ns: field("cpu_ns")?,
            wall_ns: field("wall_ns")?,
            allocations: field("allocs")?,
            allocated_bytes: field("bytes")?,
        })
    }
}

/// The instructions valgrind counted (`I refs`) in a cachegrind summary written to stderr.
pub fn instructions_in(cachegrind_stderr: &str) -> Option<u64> {
    cachegrind_stderr.lines().find_map(|line| {
        let (_, rest) = line.split_once("I   refs:")?;
        rest.trim().replace(',', "").parse().ok()
    })
}

/// Instructions per call from two runs that differ only in how many calls they count:
/// start-up and warm-up are the same in both and cancel out.
pub fn instructions_per_call(short: (u64, u64), long: (u64, u64)) -> Option<f64> {
    let (short_calls, short_instructions) = short;
    let (long_calls, long_instructions) = long;
    let calls = long_calls.checked_sub(short_calls).filter(|&c| c > 0)?;
    let instructions = long_instructions.checked_sub(short_instructions)?;
    Some(instructions as f64 / calls as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_line_reads_back() {
        let sample = Sample {
            calls: 3000,
            errors: 1,
            cpu_ns: 75_000_000,
            wall_ns: 90_000_000,
            allocations: 36_000,
            allocated_bytes: 9_000_000,
        };
        assert_eq!(sample.to_string().parse::<Sample>(), Ok(sample));
        assert!("calls=1".parse::<Sample>().is_err());
        assert!(
            "sample calls=x errors=0 cpu_ns=0 wall_ns=0 allocs=0 bytes=0"
                .parse::<Sample>()
                .is_err()
        );
    }

    #[test]
    fn variants_read_back_from_their_keys() {
        for variant in Variant::ALL {
            assert_eq!(variant.key().parse::<Variant>(), Ok(variant));
        }
        assert!("nope".parse::<Variant>().is_err());
    }

    #[test]
    fn cachegrind_summary_gives_the_instruction_count() {
        let stderr = "==12== Cachegrind, a cache and branch-prediction profiler\n\
                      ==12== \n==12== I   refs:      1,234,567\n";
        assert_eq!(instructions_in(stderr), Some(1_234_567));
        assert_eq!(instructions_in("nothing"), None);
    }

    #[test]
    fn instructions_per_call_is_the_difference_over_the_extra_calls() {
        assert_eq!(
            instructions_per_call((500, 1_000_000), (2_500, 5_000_000)),
            Some(2_000.0)
        );
        assert_eq!(instructions_per_call((500, 10), (500, 20)), None);
        assert_eq!(instructions_per_call((500, 20), (600, 10)), None);
    }
}
