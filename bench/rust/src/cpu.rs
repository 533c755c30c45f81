//! CPU time of a process, from `/proc/<pid>/stat`: on a shared machine, a steadier measure of a
//! server's work than wall time.

use std::time::Duration;

/// Clock ticks per second of `/proc`'s times (`USER_HZ`, 100 on Linux's usual builds).
const TICKS_PER_SECOND: u64 = 100;

/// User plus system CPU time the process has used so far, or `None` where `/proc` is
/// unavailable or the process is gone.
pub fn cpu_time_of(pid: u32) -> Option<Duration> {
    parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn parse(stat: &str) -> Option<Duration> {
    // The command name, in parentheses, may hold spaces; the fields after it start at `state`
    // (field 3), so `utime` (field 14) and `stime` (field 15) are the 12th and 13th.
    let mut fields = stat
        .get(stat.rfind(')')? + 1..)?
        .split_whitespace()
        .skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis(
        (utime + stime) * 1000 / TICKS_PER_SECOND,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_user_and_system_ticks() {
        let stat = "42 (a b) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0";
        assert_eq!(parse(stat), Some(Duration::from_secs(3)));
        assert_eq!(parse("42 (x"), None);
    }

    #[test]
    fn reads_this_process() {
        assert!(cpu_time_of(std::process::id()).is_some());
    }
}
