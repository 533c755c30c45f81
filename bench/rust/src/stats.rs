//! Latency samples, percentiles and medians.

use std::time::Duration;

/// Latencies of one measured run, in microseconds, sorted.
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    sorted_us: Vec<u32>,
}

impl Latencies {
    /// From unsorted samples.
    pub fn new(mut samples_us: Vec<u32>) -> Latencies {
        samples_us.sort_unstable();
        Latencies {
            sorted_us: samples_us,
        }
    }

    /// The `q` quantile (0 ≤ q ≤ 1) in microseconds, nearest rank; 0 without samples.
    pub fn quantile_us(&self, q: f64) -> u32 {
        if self.sorted_us.is_empty() {
            return 0;
        }
        let last = self.sorted_us.len() - 1;
        let rank = (q.clamp(0.0, 1.0) * last as f64).round() as usize;
        self.sorted_us[rank.min(last)]
    }

    /// The median in microseconds.
    pub fn p50_us(&self) -> u32 {
        self.quantile_us(0.50)
    }

    /// The 99th percentile in microseconds.
    pub fn p99_us(&self) -> u32 {
        self.quantile_us(0.99)
    }

    /// The largest sample in microseconds.
    pub fn max_us(&self) -> u32 {
        self.sorted_us.last().copied().unwrap_or(0)
    }

    /// How many samples.
    pub fn len(&self) -> usize {
        self.sorted_us.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.sorted_us.is_empty()
    }

    /// Every sample, sorted.
    pub fn sorted_us(&self) -> &[u32] {
        &self.sorted_us
    }

    /// Merges several runs into one distribution.
    pub fn merge<'a>(runs: impl IntoIterator<Item = &'a Latencies>) -> Latencies {
        Latencies::new(
            runs.into_iter()
                .flat_map(|run| run.sorted_us.iter().copied())
                .collect(),
        )
    }
}

/// A duration as whole microseconds, saturating.
pub fn micros(duration: Duration) -> u32 {
    u32::try_from(duration.as_micros()).unwrap_or(u32::MAX)
}

/// The median of `values` (mean of the middle two for an even count); 0 when empty.
pub fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 0 {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

/// Microseconds as a short human figure: `850 µs`, `1.24 ms`, `3.1 s`.
pub fn format_us(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1_000.0)
    } else {
        format!("{:.2} s", us / 1_000_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_use_the_nearest_rank() {
        let lat = Latencies::new((1..=100).rev().collect());
        assert_eq!(lat.quantile_us(0.0), 1);
        assert_eq!(lat.p50_us(), 51);
        assert_eq!(lat.p99_us(), 99);
        assert_eq!(lat.max_us(), 100);
        assert_eq!(Latencies::default().p99_us(), 0);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median([4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median([f64::NAN]), 0.0);
    }
}
