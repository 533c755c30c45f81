//! The count-based sliding window of a circuit breaker: the last N outcomes in a ring, with
//! running totals so a rate is two divisions.

const FAILED: u8 = 1;
const SLOW: u8 = 2;

/// The last `capacity` recorded outcomes.
#[derive(Debug)]
pub(super) struct Window {
    ring: Box<[u8]>,
    next: usize,
    len: usize,
    failed: usize,
    slow: usize,
}

/// Failure and slow-call rates, in percent, over a window's recorded calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rates {
    pub(super) calls: usize,
    pub(super) failure_rate: f32,
    pub(super) slow_call_rate: f32,
}

impl Window {
    pub(super) fn new(capacity: usize) -> Window {
        Window {
            ring: vec![0; capacity.max(1)].into_boxed_slice(),
            next: 0,
            len: 0,
            failed: 0,
            slow: 0,
        }
    }

    /// Records one outcome, evicting the oldest when full, and returns the new rates.
    pub(super) fn record(&mut self, failed: bool, slow: bool) -> Rates {
        let outcome = if failed { FAILED } else { 0 } | if slow { SLOW } else { 0 };
        if self.len == self.ring.len() {
            let evicted = self.ring[self.next];
            self.failed -= usize::from(evicted & FAILED != 0);
            self.slow -= usize::from(evicted & SLOW != 0);
        } else {
            self.len += 1;
        }
        self.ring[self.next] = outcome;
        self.next = (self.next + 1) % self.ring.len();
        self.failed += usize::from(failed);
        self.slow += usize::from(slow);
        self.rates()
    }

    pub(super) fn rates(&self) -> Rates {
        let percent = |n: usize| {
            if self.len == 0 {
                0.0
            } else {
                n as f32 * 100.0 / self.len as f32
            }
        };
        Rates {
            calls: self.len,
            failure_rate: percent(self.failed),
            slow_call_rate: percent(self.slow),
        }
    }

    /// Forgets every outcome (on a state transition).
    pub(super) fn clear(&mut self) {
        self.next = 0;
        self.len = 0;
        self.failed = 0;
        self.slow = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_outcomes_only() {
        let mut window = Window::new(4);
        for failed in [true, true, false, false] {
            window.record(failed, false);
        }
        assert_eq!(window.rates().failure_rate, 50.0);
        // Evicts the two failures.
        window.record(false, true);
        let rates = window.record(false, false);
        assert_eq!(rates.calls, 4);
        assert_eq!(rates.failure_rate, 0.0);
        assert_eq!(rates.slow_call_rate, 25.0);
        window.clear();
        assert_eq!(window.rates().calls, 0);
    }
}
