//! What the process holds: resident memory, open file descriptors and tokio tasks, and the
//! bytes allocated and not yet freed, which tell a leak (they grow) from memory the allocator
//! keeps after a peak (RSS grows, they do not).

use std::alloc::System;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use stats_alloc::{StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// One reading.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sample {
    /// `VmRSS` from `/proc/self/status`, in KiB.
    pub(crate) rss_kib: u64,
    /// Of it, `RssAnon` (heap and stacks) and `RssFile` (the binary's and libraries' pages
    /// read in so far), in KiB.
    pub(crate) rss_anon_kib: u64,
    pub(crate) rss_file_kib: u64,
    /// Entries of `/proc/self/fd`.
    pub(crate) fds: u64,
    /// `num_alive_tasks` of the current tokio runtime.
    pub(crate) tasks: u64,
    /// Bytes allocated and not freed, in KiB.
    pub(crate) heap_kib: u64,
}

/// A field of `/proc/self/status` in KiB (0 where it is not told).
fn status_kib(status: &str, field: &str) -> u64 {
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
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

/// CPU time the process has used (user and system), in ms, from `/proc/self/stat` (clock ticks
/// of 10 ms).
pub(crate) fn cpu_ms() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    (ticks(11) + ticks(12)) * 10
}

/// The machine's load average over the last minute, from `/proc/loadavg`.
pub(crate) fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

fn fds() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |dir| dir.count() as u64)
}

/// A reading now.
pub(crate) fn sample() -> Sample {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    Sample {
        rss_kib: status_kib(&status, "VmRSS:"),
        rss_anon_kib: status_kib(&status, "RssAnon:"),
        rss_file_kib: status_kib(&status, "RssFile:"),
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
        rss_anon_kib: median(|s| s.rss_anon_kib),
        rss_file_kib: median(|s| s.rss_file_kib),
        fds: median(|s| s.fds),
        tasks: median(|s| s.tasks),
        heap_kib: median(|s| s.heap_kib),
    }
}

/// The process's established TCP connections, counted by the named port at either end
/// (`accepted by` the local one, `to` the remote one); the rest as `other`. Read from
/// `/proc/self/fd` and `/proc/self/net/tcp{,6}`, so a report can say who holds what is left.
pub(crate) fn connections(named: &[(u16, String)]) -> String {
    let ours: HashSet<u64> = std::fs::read_dir("/proc/self/fd")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| std::fs::read_link(entry.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect();
    let name = |port: u16| {
        named
            .iter()
            .find(|(p, _)| *p == port)
            .map(|(_, n)| n.as_str())
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(remote), Some(&"01"), Some(inode)) =
                (fields.get(1), fields.get(2), fields.get(3), fields.get(9))
            else {
                continue;
            };
            if !inode.parse().is_ok_and(|inode: u64| ours.contains(&inode)) {
                continue;
            }
            let port = |address: &str| {
                address
                    .rsplit(':')
                    .next()
                    .and_then(|hex| u16::from_str_radix(hex, 16).ok())
                    .unwrap_or(0)
            };
            let key = match (name(port(local)), name(port(remote))) {
                (Some(local), _) => format!("accepted by {local}"),
                (None, Some(remote)) => format!("to {remote}"),
                (None, None) => "other".to_owned(),
            };
            *counts.entry(key).or_default() += 1;
        }
    }
    counts
        .iter()
        .map(|(key, count)| format!("{count} {key}"))
        .collect::<Vec<_>>()
        .join(", ")
}
