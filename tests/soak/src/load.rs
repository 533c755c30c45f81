//! The open-loop load: calls start on a fixed schedule whatever the earlier ones are doing, so
//! a slow phase piles calls up as it would in production instead of slowing the test down.

use std::error::Error as StdError;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokio::task::JoinSet;
use tokio::time::MissedTickBehavior;

use crate::caller::{Caller, SERVICES};
use crate::fleet::Health;
use crate::journal::{Journal, Kind};
use crate::ledger::Ledger;

/// Share of the calls that are GETs; the rest are POSTs, each with its own call key.
const GET_SHARE: f64 = 0.7;

/// Counts of one method's calls.
#[derive(Debug, Default)]
pub(crate) struct MethodStats {
    /// Calls made.
    pub(crate) calls: AtomicU64,
    /// Calls that succeeded.
    pub(crate) ok: AtomicU64,
    /// Calls that failed.
    pub(crate) failed: AtomicU64,
    /// Failed calls while at least one instance of the service was healthy, both when the
    /// call started and when it ended.
    pub(crate) failed_while_healthy: AtomicU64,
    /// The slowest successful call, in ms.
    pub(crate) slowest_ms: AtomicU64,
}

/// The calls that started in one phase of the run.
#[derive(Debug, Default)]
pub(crate) struct PhaseStats {
    /// Calls made.
    pub(crate) calls: AtomicU64,
    /// Of them, POSTs.
    pub(crate) posts: AtomicU64,
    /// Of those, the ones that failed.
    pub(crate) posts_failed: AtomicU64,
}

/// The load's counts.
pub(crate) struct Stats {
    /// Calls started and not yet finished.
    pub(crate) in_flight: AtomicU64,
    /// The most calls in flight at once since the resources were last noted.
    pub(crate) peak_in_flight: AtomicU64,
    /// GET calls (idempotent).
    pub(crate) get: MethodStats,
    /// POST calls (each with its own call key).
    pub(crate) post: MethodStats,
    /// By the phase the call started in: warm-up, faults, settling.
    pub(crate) phases: [PhaseStats; 3],
    /// Calls the adaptive concurrency limit refused.
    pub(crate) shed: AtomicU64,
    /// The POSTs answered with success, by call key.
    pub(crate) answered_posts: Ledger,
}

impl Stats {
    /// Counts for a run of up to `capacity` calls.
    pub(crate) fn new(capacity: usize) -> Stats {
        Stats {
            in_flight: AtomicU64::new(0),
            peak_in_flight: AtomicU64::new(0),
            get: MethodStats::default(),
            post: MethodStats::default(),
            phases: Default::default(),
            shed: AtomicU64::new(0),
            answered_posts: Ledger::new(capacity),
        }
    }
}

/// What the load needs to run.
pub(crate) struct Load {
    /// One caller per service, in [`SERVICES`] order.
    pub(crate) callers: Arc<[Caller]>,
    /// The fleet's health board.
    pub(crate) health: Arc<Health>,
    /// Where failures go.
    pub(crate) journal: Arc<Journal>,
    /// The counts.
    pub(crate) stats: Arc<Stats>,
    /// While set, ticks pass without a call.
    pub(crate) paused: Arc<AtomicBool>,
    /// When the faults phase and the settling phase begin.
    pub(crate) phase_starts: [Instant; 2],
}

impl Load {
    /// Calls at `rate` per second until `until`, then waits for the calls in flight; call
    /// number `n` of the run is the key of a POST.
    pub(crate) async fn run(self, rate: u32, until: Instant, seed: u64) {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed_10ad);
        let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(rate)));
        ticks.set_missed_tick_behavior(MissedTickBehavior::Burst);
        let mut calls = JoinSet::new();
        let mut number: u64 = 0;
        while Instant::now() < until {
            ticks.tick().await;
            while calls.try_join_next().is_some() {}
            if self.paused.load(Ordering::SeqCst) {
                continue;
            }
            let service = rng.random_range(0..SERVICES.len());
            let get = rng.random_bool(GET_SHARE);
            calls.spawn(self.call(number, service, get));
            number += 1;
        }
        while calls.join_next().await.is_some() {}
    }

    fn call(
        &self,
        number: u64,
        service: usize,
        get: bool,
    ) -> impl std::future::Future<Output = ()> {
        let callers = self.callers.clone();
        let health = self.health.clone();
        let journal = self.journal.clone();
        let stats = self.stats.clone();
        let in_flight = stats.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        stats.peak_in_flight.fetch_max(in_flight, Ordering::Relaxed);
        let phase = self
            .phase_starts
            .iter()
            .filter(|&&start| Instant::now() >= start)
            .count();
        async move {
            let method = if get { &stats.get } else { &stats.post };
            method.calls.fetch_add(1, Ordering::Relaxed);
            let in_phase = &stats.phases[phase];
            in_phase.calls.fetch_add(1, Ordering::Relaxed);
            if !get {
                in_phase.posts.fetch_add(1, Ordering::Relaxed);
            }
            let healthy_before = health.count(service);
            let started = Instant::now();
            let caller = &callers[service];
            let result = if get {
                caller.item(number).await.map(drop)
            } else {
                caller.order(&number.to_string()).await.map(drop)
            };
            let elapsed_ms = started.elapsed().as_millis() as u64;
            let healthy_after = health.count(service);
            match result {
                Ok(()) => {
                    method.ok.fetch_add(1, Ordering::Relaxed);
                    method.slowest_ms.fetch_max(elapsed_ms, Ordering::Relaxed);
                    if !get {
                        stats.answered_posts.executed_number(number);
                    }
                }
                Err(error) => {
                    method.failed.fetch_add(1, Ordering::Relaxed);
                    if !get {
                        in_phase.posts_failed.fetch_add(1, Ordering::Relaxed);
                    }
                    if error.is_bulkhead_full() {
                        stats.shed.fetch_add(1, Ordering::Relaxed);
                    }
                    if healthy_before > 0 && healthy_after > 0 {
                        method.failed_while_healthy.fetch_add(1, Ordering::Relaxed);
                    }
                    journal.record(
                        Kind::Error,
                        format!(
                            "{} {} call {number} failed after {elapsed_ms} ms (healthy instances {healthy_before} -> {healthy_after}): {}",
                            if get { "GET" } else { "POST" },
                            SERVICES[service],
                            chain(&error)
                        ),
                    );
                }
            }
            stats.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// An error with its sources, `: `-separated.
fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
