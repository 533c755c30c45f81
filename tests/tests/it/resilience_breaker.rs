//! Circuit breakers through `#[feign_client]` against a loopback service: Resilience4j's
//! defaults end to end (case D3), per-method and per-client breakers, the breaker outside the
//! retries, and the state visible as events and metrics.

use std::time::Duration;

use feign_core::resilience::{BreakerScope, CircuitState, StateTransition};
use feign_core::{CircuitBreakerConfig, Error, Retryer};
use feign_test_support::{calls_service, Calls as _, CallsClient, MetricsCapture};
use futures_util::future::join_all;
use tokio::sync::broadcast::Receiver;

fn transitions(
    events: &mut Receiver<StateTransition>,
) -> Vec<(String, CircuitState, CircuitState)> {
    std::iter::from_fn(|| events.try_recv().ok())
        .map(|t| (t.breaker.to_string(), t.from, t.to))
        .collect()
}

fn transition(from: CircuitState, to: CircuitState) -> (String, CircuitState, CircuitState) {
    ("Calls#call".to_owned(), from, to)
}

/// D3 of the reliability cases, with Resilience4j's defaults untouched.
#[tokio::test]
async fn opens_after_the_hundredth_call_and_admits_exactly_ten_trials() {
    let metrics = MetricsCapture::install();
    let (url, service) = calls_service().await;
    let config = CircuitBreakerConfig::default();
    let mut events = config.subscribe();
    let client = CallsClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .circuit_breaker(config)
        .build()
        .unwrap();

    // 100 calls, every other one failing: no decision before the 100th.
    for i in 1..=100 {
        let result = client.call(if i % 2 == 0 { "fail" } else { "ok" }).await;
        assert_eq!(result.is_err(), i % 2 == 0, "call {i}");
        if i < 100 {
            assert!(transitions(&mut events).is_empty(), "opened after call {i}");
        }
    }
    assert_eq!(
        transitions(&mut events),
        [transition(CircuitState::Closed, CircuitState::Open)]
    );
    assert_eq!(service.requests(), 100);

    // Open: 1,000 concurrent calls refused without reaching the service.
    let refused = join_all((0..1000).map(|_| client.call("ok"))).await;
    for result in &refused {
        let error = result.as_ref().unwrap_err();
        assert!(error.is_circuit_open(), "{error}");
        assert_eq!(
            error.to_string(),
            "circuit breaker open: `Calls#call` does not permit calls"
        );
        assert_eq!(error.method_key(), Some("Calls#call"));
    }
    assert_eq!(service.requests(), 100);

    // After the 60 s wait the breaker turns half-open by itself, with no call to notice.
    tokio::time::pause();
    tokio::time::advance(Duration::from_secs(60)).await;
    tokio::time::resume();
    let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .expect("a transition within 5 s")
        .unwrap();
    assert_eq!(
        (event.from, event.to),
        (CircuitState::Open, CircuitState::HalfOpen)
    );

    // Half-open: of 1,000 concurrent calls exactly 10 go through, and 5 of those fail.
    service
        .failures_left
        .store(5, std::sync::atomic::Ordering::SeqCst);
    let trials = join_all((0..1000).map(|_| client.call("auto"))).await;
    let refused = trials
        .iter()
        .filter(|r| r.as_ref().is_err_and(Error::is_circuit_open))
        .count();
    let failed = trials
        .iter()
        .filter(|r| r.as_ref().is_err_and(|e| e.status().is_some()))
        .count();
    assert_eq!(
        (refused, failed, trials.len() - refused - failed),
        (990, 5, 5)
    );
    assert_eq!(service.requests(), 110);
    assert_eq!(
        transitions(&mut events),
        [transition(CircuitState::HalfOpen, CircuitState::Open)]
    );
    assert!(client.call("ok").await.unwrap_err().is_circuit_open());
    assert_eq!(service.requests(), 110);

    let recorded = metrics.snapshot();
    let calls = |kind| {
        recorded.get(
            "resilience4j.circuitbreaker.calls",
            &[("name", "Calls#call"), ("kind", kind)],
        )
    };
    assert_eq!(calls("successful"), Some(55.0));
    assert_eq!(calls("failed"), Some(55.0));
    assert_eq!(calls("not_permitted"), Some(1991.0));
    assert_eq!(calls("ignored"), Some(0.0));
    let state = |state| {
        recorded.get(
            "resilience4j.circuitbreaker.state",
            &[("name", "Calls#call"), ("state", state)],
        )
    };
    assert_eq!(state("open"), Some(1.0));
    assert_eq!(state("closed"), Some(0.0));
    assert_eq!(state("half_open"), Some(0.0));
}

fn small_breaker() -> CircuitBreakerConfig {
    CircuitBreakerConfig::default()
        .sliding_window_size(4)
        .minimum_number_of_calls(4)
}

async fn open_with_failures(client: &CallsClient) {
    for _ in 0..4 {
        assert!(client.call("fail").await.unwrap_err().is_status());
    }
    assert!(client.call("ok").await.unwrap_err().is_circuit_open());
}

#[tokio::test]
async fn each_method_has_its_own_breaker_by_default() {
    let (url, service) = calls_service().await;
    let client = CallsClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .circuit_breaker(small_breaker())
        .build()
        .unwrap();
    open_with_failures(&client).await;
    assert_eq!(client.other("ok").await.unwrap(), "ok");
    assert_eq!(service.requests(), 5);
}

#[tokio::test]
async fn a_per_client_breaker_is_shared_by_every_method() {
    let (url, service) = calls_service().await;
    let client = CallsClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .circuit_breaker(small_breaker().scope(BreakerScope::PerClient))
        .build()
        .unwrap();
    open_with_failures(&client).await;
    let error = client.other("ok").await.unwrap_err();
    assert!(error.is_circuit_open());
    assert_eq!(
        error.to_string(),
        "circuit breaker open: `calls` does not permit calls in Calls#other"
    );
    assert_eq!(error.method_key(), Some("Calls#other"));
    assert_eq!(service.requests(), 4);
}

/// The breaker sees one outcome per call, whatever the retries did inside it.
#[tokio::test]
async fn the_breaker_wraps_the_retries() {
    let (url, service) = calls_service().await;
    let retries = Retryer::default()
        .period(Duration::from_millis(1))
        .max_period(Duration::from_millis(1))
        .max_attempts(3);
    let client = CallsClient::builder()
        .url(url)
        .retryer(retries)
        .circuit_breaker(small_breaker())
        .build()
        .unwrap();
    for call in 1..=4 {
        assert!(client.call("fail").await.unwrap_err().is_status());
        assert_eq!(service.requests(), 3 * call);
    }
    assert!(client.call("fail").await.unwrap_err().is_circuit_open());
    assert_eq!(service.requests(), 12);
}

#[tokio::test]
async fn client_errors_do_not_open_the_breaker() {
    let (url, _service) = calls_service().await;
    let client = CallsClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .circuit_breaker(small_breaker())
        .build()
        .unwrap();
    for _ in 0..8 {
        assert_eq!(
            client.call("missing").await.unwrap_err().status(),
            Some(http::StatusCode::NOT_FOUND)
        );
    }
    // An argument that cannot be sent is not recorded at all.
    assert!(client.call("..").await.unwrap_err().is_request());
    assert_eq!(client.call("ok").await.unwrap(), "ok");
}

#[tokio::test]
async fn invalid_settings_are_reported_by_build() {
    for config in [
        CircuitBreakerConfig::default().failure_rate_threshold(0.0),
        CircuitBreakerConfig::default().slow_call_rate_threshold(f32::NAN),
        CircuitBreakerConfig::default().sliding_window_size(0),
        CircuitBreakerConfig::default().permitted_number_of_calls_in_half_open_state(0),
        CircuitBreakerConfig::default().wait_duration_in_open_state(Duration::ZERO),
    ] {
        let error = CallsClient::builder()
            .url("http://127.0.0.1:9")
            .circuit_breaker(config)
            .build()
            .unwrap_err();
        assert!(error.is_builder(), "{error}");
        assert!(error.to_string().contains("circuit breaker"), "{error}");
    }
}
