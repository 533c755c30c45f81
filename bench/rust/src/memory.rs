//! Resident memory of a process, from `/proc/<pid>/status`.

/// Resident set size now and at its peak, in KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resident {
    /// `VmRSS`.
    pub rss_kb: u64,
    /// `VmHWM`, the peak.
    pub peak_kb: u64,
}

/// This process's resident memory, or `None` where `/proc` is unavailable.
pub fn resident() -> Option<Resident> {
    read("/proc/self/status")
}

/// Another process's resident memory (a server the benchmark started, say), or `None` where
/// `/proc` is unavailable or the process is gone.
pub fn resident_of(pid: u32) -> Option<Resident> {
    read(&format!("/proc/{pid}/status"))
}

fn read(path: &str) -> Option<Resident> {
    let status = std::fs::read_to_string(path).ok()?;
    Some(Resident {
        rss_kb: field_kb(&status, "VmRSS:")?,
        peak_kb: field_kb(&status, "VmHWM:")?,
    })
}

fn field_kb(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(name))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_in_kib() {
        let status = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(field_kb(status, "VmRSS:"), Some(1024));
        assert_eq!(field_kb(status, "VmHWM:"), Some(2048));
        assert_eq!(field_kb(status, "VmSwap:"), None);
    }
}
