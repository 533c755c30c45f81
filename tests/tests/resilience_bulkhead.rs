//! The bulkhead through `#[feign_client]` against a loopback service (case D5): never more
//! calls in flight than allowed, the excess refused at once, waiting callers admitted in turn.

mod resilience_common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use feign_core::{feign_client, BulkheadConfig, Error, Retryer};
use futures_util::future::join_all;
use metrics_util::debugging::DebuggingRecorder;
use resilience_common::{service, Recorded};

#[feign_client("calls")]
trait Calls {
    #[get("/calls/{mode}")]
    async fn call(&self, #[path] mode: &str) -> Result<String, Error>;
}

const AVAILABLE: &str = "resilience4j.bulkhead.available.concurrent.calls";

/// D5: 10,000 concurrent calls, 25 slots, no wait.
#[tokio::test]
async fn admits_twenty_five_and_refuses_the_rest_at_once() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let _recorder = metrics::set_default_local_recorder(&recorder);
    let (url, service) = service().await;
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
    // never waited for a slot.
    let release = async {
        while refused.load(Ordering::SeqCst) < 9_975
            || service.in_flight.load(Ordering::SeqCst) < 25
        {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let gauge = Recorded::take(&snapshotter).get(AVAILABLE, &[("name", "calls")]);
        let while_full = (open_fds(), resident_bytes());
        service.release.send_replace(true);
        (gauge, while_full)
    };
    let (results, (available_while_full, while_full)) = tokio::join!(calls, release);

    let ok = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!((ok, refused.load(Ordering::SeqCst)), (25, 9_975));
    let error = results.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert!(error.to_string().contains("`calls`"), "{error}");
    assert_eq!(error.method_key(), Some("Calls#call"));
    assert_eq!(service.requests(), 25);
    assert_eq!(service.max_in_flight.load(Ordering::SeqCst), 25);
    assert_eq!(available_while_full, Some(0.0));
    assert_eq!(
        Recorded::take(&snapshotter).get(AVAILABLE, &[("name", "calls")]),
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

#[tokio::test]
async fn a_waiting_call_gets_the_next_free_slot() {
    let (url, service) = service().await;
    let client = CallsClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .bulkhead(
            BulkheadConfig::default()
                .max_concurrent_calls(2)
                .max_wait_duration(Duration::from_secs(30)),
        )
        .build()
        .unwrap();
    let calls = join_all((0..6).map(|_| client.call("hold")));
    let release = async {
        while service.in_flight.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        service.release.send_replace(true);
    };
    let (results, ()) = tokio::join!(calls, release);
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(service.requests(), 6);
    assert_eq!(service.max_in_flight.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_call_gives_up_after_the_wait() {
    let (url, service) = service().await;
    let client = CallsClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .bulkhead(
            BulkheadConfig::default()
                .max_concurrent_calls(1)
                .max_wait_duration(Duration::from_millis(50)),
        )
        .build()
        .unwrap();
    let held = client.call("hold");
    let late = async {
        while service.in_flight.load(Ordering::SeqCst) < 1 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let result = client.call("ok").await;
        service.release.send_replace(true);
        result
    };
    let (held, late) = tokio::join!(held, late);
    assert!(held.is_ok());
    assert!(late.unwrap_err().is_bulkhead_full());
    assert_eq!(service.requests(), 1);
}

#[tokio::test]
async fn zero_slots_is_a_build_error() {
    let error = CallsClient::builder()
        .url("http://127.0.0.1:9")
        .bulkhead(BulkheadConfig::default().max_concurrent_calls(0))
        .build()
        .unwrap_err();
    assert!(error.is_builder());
    assert!(
        error.to_string().contains("max_concurrent_calls"),
        "{error}"
    );
}
