//! A body that does not decode is the call's outcome: the circuit breaker records it, the
//! bulkhead's slot and the adaptive limit's admission are held while it decodes, and the
//! fallback sees it as the cause; against a loopback service that answers 200 with a body that is
//! not the method's type.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use axum::routing::get;
use axum::Router;
use feign_core::codec::{decoder_fn, DecodeTarget};
use feign_core::resilience::{
    classifier_fn, AdaptiveLimitConfig, Classification, DefaultClassifier, FailureClassifier,
};
use feign_core::{
    feign_client, BulkheadConfig, CircuitBreakerConfig, Error, FallbackFactory, Response, Retryer,
};
use feign_test_support::Server;

#[feign_client("receipts")]
trait Receipts {
    /// 200 with `{"id": "twelve"}`: not a `Receipt`.
    #[get("/receipts/garbled")]
    async fn garbled(&self) -> Result<Receipt, Error>;

    /// 200 with `{"id": 12}`.
    #[get("/receipts/good")]
    async fn good(&self) -> Result<Receipt, Error>;
}

#[derive(Debug, PartialEq, serde::Deserialize)]
struct Receipt {
    id: u64,
}

/// The service and the number of requests it answered.
async fn service() -> (Server, Arc<AtomicUsize>) {
    let requests = Arc::new(AtomicUsize::new(0));
    let (garbled, good) = (requests.clone(), requests.clone());
    let router = Router::new()
        .route(
            "/receipts/garbled",
            get(move || async move {
                garbled.fetch_add(1, Ordering::SeqCst);
                axum::Json(serde_json::json!({ "id": "twelve" }))
            }),
        )
        .route(
            "/receipts/good",
            get(move || async move {
                good.fetch_add(1, Ordering::SeqCst);
                axum::Json(serde_json::json!({ "id": 12 }))
            }),
        );
    (Server::start(router).await, requests)
}

/// Counts decode errors as failures of the service, everything else as the default does.
fn decode_errors_fail(error: &Error) -> Classification {
    if error.is_decode() {
        Classification::Failure
    } else {
        DefaultClassifier.classify(error)
    }
}

#[tokio::test]
async fn the_breaker_counts_bodies_that_do_not_decode() {
    let (server, requests) = service().await;
    let client = ReceiptsClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .failure_classifier(classifier_fn(decode_errors_fail))
        .circuit_breaker(
            CircuitBreakerConfig::default()
                .sliding_window_size(2)
                .minimum_number_of_calls(2)
                .failure_rate_threshold(50.0),
        )
        .build()
        .unwrap();
    for _ in 0..2 {
        assert!(client.garbled().await.unwrap_err().is_decode());
    }
    let refused = client.garbled().await.unwrap_err();
    assert!(refused.is_circuit_open(), "{refused}");
    assert_eq!(
        requests.load(Ordering::SeqCst),
        2,
        "the open breaker sent nothing"
    );
}

#[derive(Default)]
struct Unknown;

impl FallbackFactory<dyn Receipts> for Unknown {
    fn create(&self, cause: Error) -> Arc<dyn Receipts> {
        Arc::new(Substitute {
            decode: cause.is_decode(),
        })
    }
}

/// Answers id 0, and says whether it was made for a decode error.
struct Substitute {
    decode: bool,
}

#[feign_core::async_trait]
impl Receipts for Substitute {
    async fn garbled(&self) -> Result<Receipt, Error> {
        Ok(Receipt {
            id: u64::from(self.decode),
        })
    }

    async fn good(&self) -> Result<Receipt, Error> {
        self.garbled().await
    }
}

#[tokio::test]
async fn the_fallback_answers_a_body_that_does_not_decode_and_sees_why() {
    let (server, _) = service().await;
    let client = ReceiptsClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .failure_classifier(classifier_fn(decode_errors_fail))
        .fallback_factory(Unknown)
        .build()
        .unwrap();
    assert_eq!(client.garbled().await.unwrap(), Receipt { id: 1 });
    assert_eq!(client.good().await.unwrap(), Receipt { id: 12 });
}

/// A decoder that holds the call while it decodes, until the test lets it go.
#[derive(Clone, Default)]
struct Gate {
    decoding: Arc<AtomicBool>,
    open: Arc<(Mutex<bool>, Condvar)>,
}

impl Gate {
    fn decoder(&self) -> impl feign_core::Decoder {
        let gate = self.clone();
        decoder_fn(move |response: &Response, target: &mut DecodeTarget<'_>| {
            gate.decoding.store(true, Ordering::SeqCst);
            let (open, opened) = &*gate.open;
            let guard = open.lock().unwrap();
            let _guard = opened
                .wait_timeout_while(guard, Duration::from_secs(10), |open| !*open)
                .unwrap();
            let mut json = serde_json::Deserializer::from_slice(response.body());
            target.deserialize(&mut json)
        })
    }

    async fn wait_until_decoding(&self) {
        while !self.decoding.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    fn open(&self) {
        *self.open.0.lock().unwrap() = true;
        self.open.1.notify_all();
    }
}

/// With one call admitted and still decoding, `limit_to_one`'s client refuses the next: the
/// admission lasts until the body is decoded.
async fn holds_admission_while_decoding(
    limit_to_one: impl FnOnce(
        feign_core::Builder<ReceiptsClient>,
    ) -> feign_core::Builder<ReceiptsClient>,
    refused: impl Fn(&Error) -> bool,
) {
    let (server, requests) = service().await;
    let gate = Gate::default();
    let client = limit_to_one(
        ReceiptsClient::builder()
            .url(server.url())
            .retryer(Retryer::never())
            .decoder(gate.decoder()),
    )
    .build()
    .unwrap();
    let first = tokio::spawn({
        let client = client.clone();
        async move { client.good().await }
    });
    gate.wait_until_decoding().await;
    let second = client.good().await.unwrap_err();
    assert!(refused(&second), "{second}");
    gate.open();
    assert_eq!(first.await.unwrap().unwrap(), Receipt { id: 12 });
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bulkhead_slot_is_held_while_the_body_decodes() {
    holds_admission_while_decoding(
        |client| {
            client.bulkhead(
                BulkheadConfig::default()
                    .max_concurrent_calls(1)
                    .max_wait_duration(Duration::ZERO),
            )
        },
        Error::is_bulkhead_full,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adaptive_limit_admits_no_other_call_while_the_body_decodes() {
    // The first window runs at `min_limit`: one call in flight.
    holds_admission_while_decoding(
        |client| client.adaptive_concurrency(AdaptiveLimitConfig::default().min_limit(1)),
        Error::is_bulkhead_full,
    )
    .await;
}
