//! What the process holds: resident memory, open file descriptors and tokio tasks, and the
//! bytes allocated and not yet freed, which tell a leak (they grow) from memory the allocator
//! keeps after a peak (RSS grows, they do not).

use std::alloc::System;
use std::time::Duration;

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// One reading.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sample {
    /// `VmRSS` from `/proc/self/status`, in KiB.
    pub(crate) rss_kib: u64,
    /// Entries of `/proc/self/fd`.
    pub(crate) fds: u64,
    /// `num_alive_tasks` of the current tokio runtime.
    pub(crate) tasks: u64,
    /// Bytes allocated and not freed, in KiB.
    pub(crate) heap_kib: u64,
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn heap_kib() -> u64 {
    // A growing `realloc` already counts in `bytes_allocated`, a shrinking one in
    // `bytes_deallocated`.
    let stats = GLOBAL.stats();
    (stats
        .bytes_allocated
        .saturating_sub(stats.bytes_deallocated)
        / 1024) as u64
}

fn fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count() as u64)
}

/// A reading now.
pub(crate) fn sample() -> Sample {
    Sample {
        rss_kib: rss_kib(),
        fds: fds(),
        tasks: tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks() as u64,
        heap_kib: heap_kib(),
    }
}

/// The median of `count` readings `gap` apart, each measure on its own, so one reading taken
/// while a burst of calls is in flight does not decide.
pub(crate) async fn settled(count: usize, gap: Duration) -> Sample {
    let mut samples = Vec::with_capacity(count);
    for i in 0..count {
        if i > 0 {
            tokio::time::sleep(gap).await;
        }
        samples.push(sample());
    }
    let median = |pick: fn(&Sample) -> u64| {
        let mut values: Vec<u64> = samples.iter().map(pick).collect();
        values.sort_unstable();
        values[values.len() / 2]
    };
    Sample {
        rss_kib: median(|s| s.rss_kib),
        fds: median(|s| s.fds),
        tasks: median(|s| s.tasks),
        heap_kib: median(|s| s.heap_kib),
    }
}
