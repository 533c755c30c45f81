//! A retry budget: retries may add at most a share of the calls plus a few per second, over a
//! sliding window (Finagle's and tower's `TpsBudget`: 20 % + 10/s over 10 s by default). And
//! the hedge budget, apart from it: hedges may add a smaller share over a short window, and none
//! while most calls are slow.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
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

/// A sliding window of `N` counters, lock-free: ten slots of a tenth of the window each, a slot
/// cleared when the clock enters it anew. What both budgets count in.
#[derive(Debug)]
struct Window<const N: usize> {
    clock: Clock,
    slot_ns: u64,
    slots: [Slot<N>; SLOTS],
}

#[derive(Debug)]
struct Slot<const N: usize> {
    epoch: AtomicU64,
    counts: [AtomicI64; N],
}

impl<const N: usize> Window<N> {
    fn new(window_ns: u64) -> Self {
        Window {
            clock: Clock::new(),
            slot_ns: (window_ns / SLOTS as u64).max(1),
            slots: std::array::from_fn(|_| Slot {
                epoch: AtomicU64::new(0),
                counts: std::array::from_fn(|_| AtomicI64::new(0)),
            }),
        }
    }

    /// The current slot's epoch and the slot, cleared if it was last used a window ago.
    fn current(&self) -> (u64, &Slot<N>) {
        let epoch = self.clock.now() / self.slot_ns + 1;
        let slot = &self.slots[(epoch % SLOTS as u64) as usize];
        let seen = slot.epoch.load(Ordering::Acquire);
        if seen != epoch
            && slot
                .epoch
                .compare_exchange(seen, epoch, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            for count in &slot.counts {
                count.store(0, Ordering::Release);
            }
        }
        (epoch, slot)
    }

    /// Adds `by` to counter `counter` now.
    fn add(&self, counter: usize, by: i64) {
        self.current().1.counts[counter].fetch_add(by, Ordering::AcqRel);
    }

    /// Each counter summed over the window.
    fn sums(&self) -> [i64; N] {
        let (epoch, _) = self.current();
        let mut sums = [0; N];
        for slot in &self.slots {
            if epoch.saturating_sub(slot.epoch.load(Ordering::Acquire)) < SLOTS as u64 {
                for (sum, count) in sums.iter_mut().zip(&slot.counts) {
                    *sum += count.load(Ordering::Acquire);
                }
            }
        }
        sums
    }
}

/// The live retry budget: one balance, deposits in, withdrawals out.
#[derive(Debug)]
pub(crate) struct Budget {
    window: Window<1>,
    deposit: i64,
    withdrawal: i64,
    reserve: i64,
}

impl Budget {
    pub(crate) fn new(settings: &RetryBudget) -> Budget {
        let ttl_ns = nanos(settings.ttl).max(1_000_000_000);
        Budget {
            window: Window::new(ttl_ns),
            deposit: (settings.percent * 10.0).round() as i64,
            withdrawal: 1000,
            reserve: i64::from(settings.min_per_second)
                .saturating_mul((ttl_ns / 1_000_000_000) as i64)
                .saturating_mul(1000),
        }
    }

    /// Counts one call.
    pub(crate) fn deposit(&self) {
        self.window.add(0, self.deposit);
    }

    /// Takes one retry from the budget, or says there is none left.
    pub(crate) fn withdraw(&self) -> bool {
        let [balance] = self.window.sums();
        if balance + self.reserve < self.withdrawal {
            return false;
        }
        self.window.add(0, -self.withdrawal);
        true
    }
}

/// How many hedges a service's calls may send, apart from the retry budget: a share of the
/// calls plus a few per second over a short window (Finagle's backup-request budget, a
/// `maxExtraLoad` of 1 to 5 %), and none while most calls are slow.
///
/// Hedging is for outliers: one slow instance among fast ones makes at most its share of the
/// calls slow (1/n under round robin, less under the load-aware policies). When more than half
/// of the calls ask for a hedge, the slowness is the fleet's (an overload, or the caller's
/// machine stalling) and a hedge would only add load, so none is sent until the share falls.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct HedgeBudget {
    pub(crate) percent: f64,
    pub(crate) min_per_second: u32,
    pub(crate) window: Duration,
    pub(crate) overload_share: f64,
}

impl Default for HedgeBudget {
    fn default() -> Self {
        HedgeBudget {
            percent: 5.0,
            min_per_second: 5,
            window: Duration::from_secs(1),
            overload_share: 0.5,
        }
    }
}

impl HedgeBudget {
    /// 5 % of the calls plus 5 hedges a second, over a 1 s window; none while more than half
    /// of the calls in the window asked for one.
    pub fn new() -> Self {
        HedgeBudget::default()
    }

    /// The share of calls that may send a hedge, in percent (default 5, clamped to 0..=100).
    pub fn percent(mut self, percent: f64) -> Self {
        self.percent = if percent.is_nan() {
            5.0
        } else {
            percent.clamp(0.0, 100.0)
        };
        self
    }

    /// Hedges allowed per second whatever the call rate (default 5).
    pub fn min_per_second(mut self, n: u32) -> Self {
        self.min_per_second = n;
        self
    }

    /// The window calls, hedges and requests for hedges are counted over (default 1 s; at
    /// least 100 ms). A short one keeps a quiet spell from saving up hedges for a burst.
    pub fn window(mut self, window: Duration) -> Self {
        self.window = window.max(Duration::from_millis(100));
        self
    }

    /// The share of calls asking for a hedge above which none is sent (default 0.5, clamped
    /// to 0..=1; 1.0 never stops for that). Judged once the window holds
    /// [`HedgeBudget::MIN_CALLS`] calls.
    pub fn overload_share(mut self, share: f64) -> Self {
        self.overload_share = if share.is_nan() {
            0.5
        } else {
            share.clamp(0.0, 1.0)
        };
        self
    }

    /// The calls a window must hold before the share asking for hedges is judged.
    pub const MIN_CALLS: u64 = 10;
}

/// Why a hedge was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HedgeRefusal {
    /// The budget is spent.
    Budget,
    /// Most calls are slow: an overload, not an outlier.
    Overload,
}

/// The hedge window's counters.
const CALLS: usize = 0;
const ASKS: usize = 1;
const HEDGES: usize = 2;

/// The live hedge budget.
#[derive(Debug)]
pub(crate) struct Hedges {
    window: Window<3>,
    share: f64,
    reserve: f64,
    overload_share: f64,
    /// Whether a hedge was ever asked for: calls are counted from then on, so a service whose
    /// clients never hedge pays no clock reading per call.
    asked: AtomicBool,
}

impl Hedges {
    pub(crate) fn new(settings: &HedgeBudget) -> Hedges {
        let window_ns = nanos(settings.window).max(100_000_000);
        Hedges {
            window: Window::new(window_ns),
            share: settings.percent / 100.0,
            reserve: f64::from(settings.min_per_second) * window_ns as f64 / 1e9,
            overload_share: settings.overload_share,
            asked: AtomicBool::new(false),
        }
    }

    /// Counts one call (once any hedge was asked for).
    pub(crate) fn on_call(&self) {
        if self.asked.load(Ordering::Relaxed) {
            self.window.add(CALLS, 1);
        }
    }

    /// Counts a request for a hedge, and grants it unless most calls in the window asked for
    /// one too or the budget is spent.
    pub(crate) fn allow(&self) -> Result<(), HedgeRefusal> {
        if !self.asked.swap(true, Ordering::Relaxed) {
            self.on_call(); // the asking call itself, started before counting did
        }
        self.window.add(ASKS, 1);
        let [calls, asks, hedges] = self.window.sums().map(|n| n.max(0) as f64);
        if calls >= HedgeBudget::MIN_CALLS as f64 && asks > calls * self.overload_share {
            return Err(HedgeRefusal::Overload);
        }
        if hedges + 1.0 > calls * self.share + self.reserve {
            return Err(HedgeRefusal::Budget);
        }
        self.window.add(HEDGES, 1);
        Ok(())
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

    /// 1,000 calls a second with one in 50 slow (an outlier's share): 5 % of calls plus 5 a
    /// second may hedge, so every slow call does; when every call is slow, none does once ten
    /// calls were counted.
    #[tokio::test(start_paused = true)]
    async fn hedges_are_a_small_share_and_stop_when_most_calls_are_slow() {
        let hedges = Hedges::new(&HedgeBudget::default());
        let (mut asked, mut granted) = (0, 0);
        for call in 0..5_000 {
            hedges.on_call();
            if call % 50 == 0 {
                asked += 1;
                granted += usize::from(hedges.allow().is_ok());
            }
            tokio::time::advance(Duration::from_millis(1)).await;
        }
        assert_eq!(granted, asked, "an outlier's calls are all hedged");

        let (mut refused_overload, mut granted) = (0, 0);
        for _ in 0..5_000 {
            hedges.on_call();
            match hedges.allow() {
                Ok(()) => granted += 1,
                Err(HedgeRefusal::Overload) => refused_overload += 1,
                Err(HedgeRefusal::Budget) => {}
            }
            tokio::time::advance(Duration::from_millis(1)).await;
        }
        assert!(granted <= 60, "{granted} hedges while every call was slow");
        assert!(refused_overload > 4_000, "{refused_overload}");
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
