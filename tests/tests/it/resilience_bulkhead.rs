//! The bulkhead through `#[feign_client]` against a loopback service: never more calls in
//! flight than allowed, waiting callers admitted in turn. Case D5 (10,000 calls, the excess
//! refused at once) measures the whole process and lives in `tests/bulkhead_footprint.rs`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use feign_core::{BulkheadConfig, Retryer};
use feign_test_support::{calls_service, Calls as _, CallsClient};
use futures_util::future::join_all;

#[tokio::test]
async fn a_waiting_call_gets_the_next_free_slot() {
    let (url, service) = calls_service().await;
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
    let (url, service) = calls_service().await;
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
