//! Load generators: a closed loop (N callers, each calling again when its call returns) and an
//! open loop (calls started at a fixed rate whatever the latency, so slowness is not hidden by
//! callers waiting).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::stats::{micros, Latencies};

/// The order in which run `run` (from 0) measures `variants`: as given in even runs, reversed in
/// odd ones, so that over two runs every pair is measured A B, then B A, and a drift of the
/// machine's load falls on both alike.
pub fn interleaved<T: Copy>(variants: &[T], run: usize) -> Vec<T> {
    let mut order = variants.to_vec();
    if run % 2 == 1 {
        order.reverse();
    }
    order
}

/// What a closed-loop run measured.
#[derive(Debug, Clone)]
pub struct ClosedRun {
    /// Wall time from the first call to the last answer.
    pub elapsed: Duration,
    /// Latency of every call, failed ones included.
    pub latencies: Latencies,
    /// Calls that failed.
    pub errors: u64,
}

impl ClosedRun {
    /// Successful calls per second over the run: a failed call is not throughput, however
    /// fast it failed.
    pub fn rps(&self) -> f64 {
        let succeeded = (self.latencies.len() as u64).saturating_sub(self.errors);
        succeeded as f64 / self.elapsed.as_secs_f64().max(f64::EPSILON)
    }
}

/// When a closed-loop run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// After this many calls in all.
    Requests(u64),
    /// When this much time has passed (calls in flight then still finish and count).
    Time(Duration),
}

/// Sends calls from `concurrency` callers until `budget` is spent; `call(id)` returns whether
/// the call succeeded. Ids cycle through `0..1000`.
pub async fn closed_loop<F, Fut>(concurrency: usize, budget: Budget, call: F) -> ClosedRun
where
    F: Fn(u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send,
{
    let next = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let (requests, deadline) = match budget {
        Budget::Requests(requests) => (requests, None),
        Budget::Time(time) => (u64::MAX, Some(started + time)),
    };
    let mut callers = Vec::with_capacity(concurrency);
    for _ in 0..concurrency.max(1) {
        let (call, next, errors) = (call.clone(), next.clone(), errors.clone());
        callers.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= requests || deadline.is_some_and(|end| Instant::now() >= end) {
                    return samples;
                }
                let sent = Instant::now();
                if !call(index % 1000).await {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
                samples.push(micros(sent.elapsed()));
            }
        }));
    }
    let mut samples = Vec::new();
    for caller in callers {
        if let Ok(mut own) = caller.await {
            samples.append(&mut own);
        }
    }
    ClosedRun {
        elapsed: started.elapsed(),
        latencies: Latencies::new(samples),
        errors: errors.load(Ordering::Relaxed),
    }
}

/// One call of an open-loop run.
#[derive(Debug, Clone, Copy)]
pub struct OpenCall {
    /// When it was due, after the start of the run.
    pub due: Duration,
    /// From when it was due until it returned (a late start counts as latency).
    pub latency_us: u32,
    /// From when it started until it returned: its own latency, without the lateness of its
    /// start (Tokio's timer ticks every millisecond, so a call may leave up to 1 ms late).
    pub own_us: u32,
    /// Whether it succeeded.
    pub ok: bool,
}

/// Starts `call(id)` `rate` times a second for `duration`, each in its own task, and waits for
/// every call (a call's own timeout bounds the wait).
pub async fn open_loop<F, Fut>(rate: u32, duration: Duration, call: F) -> Vec<OpenCall>
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = bool> + Send + 'static,
{
    let period = Duration::from_secs(1) / rate.max(1);
    let total = (duration.as_secs_f64() * f64::from(rate.max(1))).round() as u64;
    let started = tokio::time::Instant::now();
    let mut calls = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    for index in 0..total {
        let due = period * u32::try_from(index).unwrap_or(u32::MAX);
        tokio::time::sleep_until(started + due).await;
        let call = call(index % 1000);
        let due_at = started + due;
        calls.push(tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            let ok = call.await;
            OpenCall {
                due,
                latency_us: micros(due_at.elapsed()),
                own_us: micros(started.elapsed()),
                ok,
            }
        }));
    }
    let mut results = Vec::with_capacity(calls.len());
    for call in calls {
        if let Ok(result) = call.await {
            results.push(result);
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::interleaved;

    #[test]
    fn every_other_run_reverses_the_order() {
        assert_eq!(interleaved(&['a', 'b', 'c'], 0), ['a', 'b', 'c']);
        assert_eq!(interleaved(&['a', 'b', 'c'], 1), ['c', 'b', 'a']);
        assert_eq!(interleaved(&['a', 'b', 'c'], 2), ['a', 'b', 'c']);
    }
}
