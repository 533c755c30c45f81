//! The bulkhead's footprint (case D5): 10,000 concurrent calls against 25 slots hold no
//! connection and leave nothing queued, read from this process's descriptors and resident memory.
//!
//! A binary of its own, outside `tests/it`: it measures the whole process, so no other test may
//! open sockets or allocate beside it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use feign_core::{BulkheadConfig, Error, Retryer};
use feign_test_support::{calls_service, Calls as _, CallsClient, MetricsCapture};
use futures_util::future::join_all;

const AVAILABLE: &str = "resilience4j.bulkhead.available.concurrent.calls";

/// D5: 10,000 concurrent calls, 25 slots, no wait.
#[tokio::test]
async fn admits_twenty_five_and_refuses_the_rest_at_once() {
    let metrics = MetricsCapture::install();
    let (url, service) = calls_service().await;
    let client = CallsClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .bulkhead(BulkheadConfig::default())
        .build()
        .unwrap();
    let baseline = (open_fds(), resident_bytes());
    let refused = AtomicUsize::new(0);
    let calls = join_all((0..10_000).map(|_| async {
        let result = client.call("hold").await;
        if result.as_ref().is_err_and(Error::is_bulkhead_full) {
            refused.fetch_add(1, Ordering::SeqCst);
        }
        result
    }));
    // The held calls are released only once every other call has been refused: refusals
    // never waited for a slot. The wait ends once every call is either refused or held by the
    // service, or after 30 s, so that a bulkhead admitting too many (or queueing calls) fails
    // instead of hanging.
    let release = async {
        let settled = async {
            while refused.load(Ordering::SeqCst) + service.in_flight.load(Ordering::SeqCst) < 10_000
            {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(30), settled).await;
        let seen = (
            refused.load(Ordering::SeqCst),
            service.in_flight.load(Ordering::SeqCst),
        );
        let gauge = metrics.snapshot().get(AVAILABLE, &[("name", "calls")]);
        let while_full = (open_fds(), resident_bytes());
        service.release.send_replace(true);
        (gauge, while_full, seen)
    };
    let (results, (available_while_full, while_full, seen)) = tokio::join!(calls, release);
    assert_eq!(seen, (9_975, 25), "(refused, held) before the release");

    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!((ok, refused.load(Ordering::SeqCst)), (25, 9_975));
    let error = results.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert!(error.to_string().contains("`calls`"), "{error}");
    assert_eq!(error.method_key(), Some("Calls#call"));
    assert_eq!(service.requests(), 25);
    assert_eq!(service.max_in_flight.load(Ordering::SeqCst), 25);
    assert_eq!(available_while_full, Some(0.0));
    assert_eq!(
        metrics.snapshot().get(AVAILABLE, &[("name", "calls")]),
        Some(25.0)
    );
    // Refused calls hold no connection and leave nothing queued (Linux only: read from /proc).
    if let ((Some(fds_before), Some(rss_before)), (Some(fds_full), Some(rss_full))) =
        (baseline, while_full)
    {
        assert!(
            fds_full < fds_before + 100,
            "{fds_before} descriptors before, {fds_full} while full"
        );
        assert!(
            rss_full < rss_before + 50 * 1024 * 1024,
            "resident memory grew from {rss_before} to {rss_full} bytes"
        );
    }
}

/// The descriptors this process has open, where `/proc` tells.
fn open_fds() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count())
}

/// This process's resident memory in bytes, where `/proc` tells (pages of 4 KiB).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}
