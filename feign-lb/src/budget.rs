//! A retry budget: retries may add at most a share of the calls plus a few per second, over a
//! sliding window (Finagle's and tower's `TpsBudget`: 20 % + 10/s over 10 s by default).

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use crate::clock::{nanos, Clock};

/// Retry budget settings.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct RetryBudget {
    pub(crate) percent: f64,
    pub(crate) min_per_second: u32,
    pub(crate) ttl: Duration,
}

impl Default for RetryBudget {
    fn default() -> Self {
        RetryBudget {
            percent: 20.0,
            min_per_second: 10,
            ttl: Duration::from_secs(10),
        }
    }
}

impl RetryBudget {
    /// 20 % of the calls plus 10 retries a second, over a 10 s window.
    pub fn new() -> Self {
        RetryBudget::default()
    }

    /// The share of calls that may be retried, in percent (default 20, clamped to 0..=1000).
    pub fn percent(mut self, percent: f64) -> Self {
        self.percent = if percent.is_nan() {
            20.0
        } else {
            percent.clamp(0.0, 1000.0)
        };
        self
    }

    /// Retries allowed per second whatever the call rate (default 10).
    pub fn min_per_second(mut self, n: u32) -> Self {
        self.min_per_second = n;
        self
    }

    /// How long a call's deposit counts (default 10 s; at least 1 s).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_secs(1));
        self
    }
}

const SLOTS: usize = 10;

#[derive(Debug, Default)]
struct Slot {
    epoch: AtomicU64,
    balance: AtomicI64,
}

/// The live budget: ten slots of a tenth of the window each; lock-free.
#[derive(Debug)]
pub(crate) struct Budget {
    clock: Clock,
    slot_ns: u64,
    deposit: i64,
    withdrawal: i64,
    reserve: i64,
    slots: [Slot; SLOTS],
}

impl Budget {
    pub(crate) fn new(settings: &RetryBudget) -> Budget {
        let ttl_ns = nanos(settings.ttl).max(1_000_000_000);
        Budget {
            clock: Clock::new(),
            slot_ns: ttl_ns / SLOTS as u64,
            deposit: (settings.percent * 10.0).round() as i64,
            withdrawal: 1000,
            reserve: i64::from(settings.min_per_second)
                .saturating_mul((ttl_ns / 1_000_000_000) as i64)
                .saturating_mul(1000),
            slots: Default::default(),
        }
    }

    fn current(&self) -> (u64, &Slot) {
        let epoch = self.clock.now() / self.slot_ns + 1;
        let slot = &self.slots[(epoch % SLOTS as u64) as usize];
        let seen = slot.epoch.load(Ordering::Acquire);
        if seen != epoch
            && slot
                .epoch
                .compare_exchange(seen, epoch, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            slot.balance.store(0, Ordering::Release);
        }
        (epoch, slot)
    }

    /// Counts one call.
    pub(crate) fn deposit(&self) {
        let (_, slot) = self.current();
        slot.balance.fetch_add(self.deposit, Ordering::AcqRel);
    }

    /// Takes one retry from the budget, or says there is none left.
    pub(crate) fn withdraw(&self) -> bool {
        let (epoch, slot) = self.current();
        let sum: i64 = self
            .slots
            .iter()
            .filter(|s| epoch.saturating_sub(s.epoch.load(Ordering::Acquire)) < SLOTS as u64)
            .map(|s| s.balance.load(Ordering::Acquire))
            .sum();
        if sum + self.reserve < self.withdrawal {
            return false;
        }
        slot.balance.fetch_sub(self.withdrawal, Ordering::AcqRel);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Case D2 of the reliability plan, on the paused clock: 1,000 calls a second for 10 s, all
    /// failing, each asking for up to 3 retries.
    #[tokio::test(start_paused = true)]
    async fn total_failure_is_held_to_the_budget() {
        let budget = Budget::new(&RetryBudget::default());
        let (mut calls, mut attempts) = (0u64, 0u64);
        for _ms in 0..10_000 {
            budget.deposit();
            calls += 1;
            attempts += 1;
            for _retry in 0..3 {
                if !budget.withdraw() {
                    break;
                }
                attempts += 1;
            }
            tokio::time::advance(Duration::from_millis(1)).await;
        }
        assert_eq!(calls, 10_000);
        assert!(attempts <= 12_100 + 50, "attempts {attempts}");
        assert!(
            attempts >= 11_900,
            "the budget should allow about 20 %: {attempts}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn idle_budget_allows_the_minimum_per_second() {
        let budget = Budget::new(&RetryBudget::default());
        let mut granted = 0;
        for _ in 0..1000 {
            if budget.withdraw() {
                granted += 1;
            }
        }
        assert_eq!(granted, 100, "10/s over a 10 s window");
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(budget.withdraw(), "withdrawals expire with the window");
    }
}
