//! Fallbacks of `#[feign_client]` against a loopback service: used for 5xx, timeouts, refused
//! connections, an open breaker, a full bulkhead and the adaptive limit, never for 4xx; a factory
//! sees the cause; the classifier decides; consumed arguments still reach the fallback.

use std::sync::Arc;
use std::time::Duration;

use feign_core::resilience::{
    classifier_fn, AdaptiveLimitConfig, Classification, DefaultClassifier, FailureClassifier,
};
use feign_core::{
    feign_client, BulkheadConfig, CircuitBreakerConfig, Error, FallbackFactory, Options, Retryer,
};
use feign_test_support::{calls_service, closed_port_url};
use http::StatusCode;

#[feign_client("calls", fallback = Cached)]
trait Calls {
    #[get("/calls/{mode}")]
    async fn call(&self, #[path] mode: &str) -> Result<String, Error>;

    /// The body is passed by value and sent raw: the fallback must still get it.
    #[post("/calls/{mode}")]
    async fn send(&self, #[path] mode: &str, #[body] note: String) -> Result<String, Error>;
}

#[derive(Default)]
struct Cached;

#[feign_core::async_trait]
impl Calls for Cached {
    async fn call(&self, mode: &str) -> Result<String, Error> {
        Ok(format!("cached {mode}"))
    }

    async fn send(&self, mode: &str, note: String) -> Result<String, Error> {
        Ok(format!("kept {mode}: {note}"))
    }
}

fn client(url: String) -> CallsClientBuilder {
    CallsClient::builder().url(url).retryer(Retryer::never())
}

type CallsClientBuilder = feign_core::Builder<CallsClient>;

#[tokio::test]
async fn answers_server_errors_but_not_client_errors() {
    let (url, service) = calls_service().await;
    let client = client(url).build().unwrap();
    assert_eq!(client.call("ok").await.unwrap(), "ok");
    assert_eq!(client.call("fail").await.unwrap(), "cached fail");
    let missing = client.call("missing").await.unwrap_err();
    assert_eq!(missing.status(), Some(StatusCode::NOT_FOUND));
    assert_eq!(service.requests(), 3);
}

#[tokio::test]
async fn answers_timeouts_and_refused_connections() {
    let (url, _service) = calls_service().await;
    let slow = client(url)
        .options(Options::default().read_timeout(Duration::from_millis(100)))
        .build()
        .unwrap();
    assert_eq!(slow.call("hang").await.unwrap(), "cached hang");
    let refused = client(closed_port_url()).build().unwrap();
    assert_eq!(refused.call("ok").await.unwrap(), "cached ok");
}

#[tokio::test]
async fn a_consumed_body_still_reaches_the_fallback() {
    let (url, service) = calls_service().await;
    let client = client(url).build().unwrap();
    let note = String::from("hello");
    assert_eq!(client.send("fail", note).await.unwrap(), "kept fail: hello");
    assert_eq!(service.requests(), 1);
}

#[tokio::test]
async fn answers_an_open_breaker_without_network_io() {
    let (url, service) = calls_service().await;
    let client = client(url)
        .circuit_breaker(
            CircuitBreakerConfig::default()
                .sliding_window_size(2)
                .minimum_number_of_calls(2),
        )
        .build()
        .unwrap();
    for _ in 0..2 {
        assert_eq!(client.call("fail").await.unwrap(), "cached fail");
    }
    assert_eq!(client.call("ok").await.unwrap(), "cached ok");
    assert_eq!(service.requests(), 2);
}

#[tokio::test]
async fn answers_a_full_bulkhead() {
    answers_the_call_over_one_in_flight(|client| {
        client.bulkhead(BulkheadConfig::default().max_concurrent_calls(1))
    })
    .await;
}

#[tokio::test]
async fn answers_a_call_over_the_adaptive_limit() {
    // The first window runs at `min_limit`: one call in flight.
    answers_the_call_over_one_in_flight(|client| {
        client.adaptive_concurrency(AdaptiveLimitConfig::default().min_limit(1))
    })
    .await;
}

/// With one call held in flight, `limit_to_one`'s client answers the next from the fallback.
async fn answers_the_call_over_one_in_flight(
    limit_to_one: impl FnOnce(CallsClientBuilder) -> CallsClientBuilder,
) {
    let (url, service) = calls_service().await;
    let client = limit_to_one(client(url)).build().unwrap();
    let held = client.call("hold");
    let refused = async {
        while service.in_flight.load(std::sync::atomic::Ordering::SeqCst) < 1 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let answer = client.call("ok").await;
        service.release.send_replace(true);
        answer
    };
    let (held, refused) = tokio::join!(held, refused);
    assert_eq!(held.unwrap(), "hold");
    assert_eq!(refused.unwrap(), "cached ok");
    assert_eq!(service.requests(), 1);
}

#[tokio::test]
async fn the_classifier_decides_what_falls_back() {
    let (url, _service) = calls_service().await;
    let client = client(url)
        .failure_classifier(classifier_fn(|error| match error.status() {
            Some(StatusCode::NOT_FOUND) => Classification::Failure,
            Some(status) if status.is_server_error() => Classification::Success,
            _ => DefaultClassifier.classify(error),
        }))
        .build()
        .unwrap();
    assert_eq!(client.call("missing").await.unwrap(), "cached missing");
    assert!(client.call("fail").await.unwrap_err().is_status());
}

/// A fallback given to the builder replaces the attribute's.
#[tokio::test]
async fn the_builder_can_give_the_fallback() {
    struct Fixed(&'static str);

    #[feign_core::async_trait]
    impl Calls for Fixed {
        async fn call(&self, _mode: &str) -> Result<String, Error> {
            Ok(self.0.to_owned())
        }

        async fn send(&self, _mode: &str, _note: String) -> Result<String, Error> {
            Ok(self.0.to_owned())
        }
    }

    let (url, _service) = calls_service().await;
    let client = client(url)
        .fallback(Arc::new(Fixed("fixed")))
        .build()
        .unwrap();
    assert_eq!(client.call("fail").await.unwrap(), "fixed");
}

#[feign_client("status", fallback_factory = Explain)]
trait Status {
    #[get("/calls/{mode}")]
    async fn status(&self, #[path] mode: &str) -> Result<String, Error>;
}

#[derive(Default)]
struct Explain;

impl FallbackFactory<dyn Status> for Explain {
    fn create(&self, cause: Error) -> Arc<dyn Status> {
        Arc::new(Explained(cause))
    }
}

struct Explained(Error);

#[feign_core::async_trait]
impl Status for Explained {
    async fn status(&self, mode: &str) -> Result<String, Error> {
        let status = self.0.status().map_or(0, |s| s.as_u16());
        Ok(format!(
            "{mode} failed: {status} in {}",
            self.0.method_key().unwrap_or("?")
        ))
    }
}

#[tokio::test]
async fn a_fallback_factory_sees_the_cause() {
    let (url, _service) = calls_service().await;
    let client = StatusClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .build()
        .unwrap();
    assert_eq!(
        client.status("fail").await.unwrap(),
        "fail failed: 503 in Status#status"
    );
    assert_eq!(
        client.status("missing").await.unwrap_err().status(),
        Some(StatusCode::NOT_FOUND)
    );
}

#[feign_client("plain")]
trait Plain {
    #[get("/calls/{mode}")]
    async fn call(&self, #[path] mode: &str) -> Result<String, Error>;
}

struct PlainFallback;

#[feign_core::async_trait]
impl Plain for PlainFallback {
    async fn call(&self, _mode: &str) -> Result<String, Error> {
        Ok("fallback".to_owned())
    }
}

/// Without the attribute, a client has no fallback until the builder gives one.
#[tokio::test]
async fn a_client_without_the_attribute_takes_one_from_the_builder() {
    let (url, _service) = calls_service().await;
    let without = PlainClient::builder()
        .url(url.clone())
        .retryer(Retryer::never())
        .build()
        .unwrap();
    assert!(without.call("fail").await.unwrap_err().is_status());
    let with = PlainClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .fallback(Arc::new(PlainFallback))
        .build()
        .unwrap();
    assert_eq!(with.call("fail").await.unwrap(), "fallback");
}
