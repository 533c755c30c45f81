//! Call metrics read back from `metrics-util`'s DebuggingRecorder, installed once for this test
//! binary before any call; each test uses its own client method so its series are its own, and
//! tests run one at a time.
//!
//! A binary of its own, outside `tests/it`: feign-core makes a client method's metric handles on
//! its first call in the process and keeps them, so the recorder must be installed before any
//! other test calls the same methods.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use std::time::Duration;

use axum::body::Body;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use feign_core::{feign_client, Error, Retryer, StreamingResponse};
use feign_test_support::{closed_port_url, orders_server, quick_retryer, OrderClient, Server};
use futures_util::StreamExt;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

/// Held by each test: a snapshot drains every series, so tests must not read each other's.
static EXCLUSIVE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn snapshotter() -> &'static Snapshotter {
    static SNAPSHOTTER: OnceLock<Snapshotter> = OnceLock::new();
    SNAPSHOTTER.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder
            .install()
            .expect("no other recorder in this binary");
        snapshotter
    })
}

/// Every series of metric `name` whose `method_key` is `key`: its labels and its value.
/// Taking a snapshot resets counters, so each test reads once.
fn series(name: &str, key: &str) -> Vec<(BTreeMap<String, String>, DebugValue)> {
    snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .filter(|(k, ..)| k.key().name() == name)
        .map(|(k, _, _, value)| {
            let labels: BTreeMap<String, String> = k
                .key()
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            (labels, value)
        })
        .filter(|(labels, _)| labels.get("method_key").map(String::as_str) == Some(key))
        .collect()
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn durations_are_recorded_per_route_and_status_without_argument_values() {
    let _exclusive = EXCLUSIVE.lock().await;
    snapshotter();
    let server = orders_server().await;
    let client = OrderClient::builder().url(server.url()).build().unwrap();
    for id in [111u64, 222, 333] {
        client.get_order(&id).await.unwrap();
    }
    let found = series("http.client.request.duration", "OrderService#get_order");
    assert_eq!(found.len(), 1, "one series for three ids: {found:?}");
    let (labels_seen, value) = &found[0];
    assert_eq!(
        labels_seen,
        &labels(&[
            ("client", "order-service"),
            ("method_key", "OrderService#get_order"),
            ("http.request.method", "GET"),
            ("url.template", "/orders/{id}"),
            ("outcome", "SUCCESS"),
            ("http.response.status_code", "200"),
        ])
    );
    match value {
        DebugValue::Histogram(values) => {
            assert_eq!(values.len(), 3);
            assert!(values.iter().all(|v| v.0 > 0.0 && v.0 < 60.0), "{values:?}");
        }
        other => panic!("not a histogram: {other:?}"),
    }
}

#[tokio::test]
async fn server_errors_and_retries_are_counted() {
    let _exclusive = EXCLUSIVE.lock().await;
    snapshotter();
    let server = orders_server().await;
    let client = OrderClient::builder()
        .url(server.url())
        .retryer(quick_retryer(3))
        .build()
        .unwrap();
    client.get_item("1", "2").await.unwrap_err();
    let key = "OrderService#get_item";
    let retries = series("feign.client.retries", key);
    assert_eq!(
        retries,
        vec![(
            labels(&[("client", "order-service"), ("method_key", key)]),
            DebugValue::Counter(2)
        )]
    );
    let durations = series("http.client.request.duration", key);
    assert_eq!(durations.len(), 1, "{durations:?}");
    let (seen, _) = &durations[0];
    assert_eq!(seen.get("outcome").unwrap(), "SERVER_ERROR");
    assert_eq!(seen.get("http.response.status_code").unwrap(), "503");
    assert_eq!(seen.get("error.type").unwrap(), "503");
    assert_eq!(
        seen.get("url.template").unwrap(),
        "/orders/{id}/items/{item}"
    );
}

#[tokio::test]
async fn a_failure_without_response_is_unknown_with_its_error_type() {
    let _exclusive = EXCLUSIVE.lock().await;
    snapshotter();
    let client = OrderClient::builder()
        .url(closed_port_url())
        .retryer(Retryer::never())
        .build()
        .unwrap();
    client.cancel("9").await.unwrap_err();
    let durations = series("http.client.request.duration", "OrderService#cancel");
    assert_eq!(durations.len(), 1, "{durations:?}");
    let (seen, _) = &durations[0];
    assert_eq!(seen.get("outcome").unwrap(), "UNKNOWN");
    assert_eq!(seen.get("error.type").unwrap(), "connect");
    assert_eq!(seen.get("http.request.method").unwrap(), "DELETE");
    assert!(!seen.contains_key("http.response.status_code"), "{seen:?}");
}

/// Generates `FilesClient`.
#[feign_client("files")]
trait Files {
    /// A body whose second half comes a second after its first.
    #[get("/files/slow")]
    async fn slow(&self) -> Result<StreamingResponse, Error>;
}

#[tokio::test]
async fn a_streamed_call_is_timed_to_its_head() {
    let _exclusive = EXCLUSIVE.lock().await;
    snapshotter();
    let hold = Duration::from_secs(1);
    let router = Router::new().route(
        "/files/slow",
        get(move || async move {
            let chunks = futures_util::stream::unfold(0, move |step| async move {
                if step == 1 {
                    tokio::time::sleep(hold).await;
                }
                (step < 2).then(|| {
                    (
                        Ok::<_, std::io::Error>(Bytes::from_static(b"half")),
                        step + 1,
                    )
                })
            });
            Body::from_stream(chunks)
        }),
    );
    let server = Server::start(router).await;
    let files = FilesClient::builder().url(server.url()).build().unwrap();
    let mut response = files.slow().await.unwrap();
    let key = "Files#slow";
    let durations = series("http.client.request.duration", key);
    assert_eq!(durations.len(), 1, "recorded at the head: {durations:?}");
    let (seen, value) = &durations[0];
    assert_eq!(seen.get("http.response.status_code").unwrap(), "200");
    match value {
        DebugValue::Histogram(values) => {
            assert!(
                values.iter().all(|v| v.0 < hold.as_secs_f64()),
                "{values:?}"
            );
        }
        other => panic!("not a histogram: {other:?}"),
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.next().await {
        body.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(body, b"halfhalf");
    let after = series("http.client.request.duration", key);
    assert!(
        after
            .iter()
            .all(|(_, value)| matches!(value, DebugValue::Histogram(v) if v.is_empty())),
        "reading the body records nothing more: {after:?}"
    );
}

/// Generates `ReceiptsClient`.
#[feign_client("receipts")]
trait Receipts {
    /// Answers 200 with a body that is not the JSON of `Receipt`.
    #[get("/receipts/garbled")]
    async fn garbled(&self) -> Result<Receipt, Error>;
}

/// What `Receipts::garbled` should have answered.
#[derive(Debug, serde::Deserialize)]
#[allow(dead_code)]
struct Receipt {
    id: u64,
}

/// Decoding runs inside the call, so a body that does not decode is a failed call for the
/// metrics: its status, and the decode error as its error type.
#[tokio::test]
async fn a_body_that_does_not_decode_is_recorded_as_a_decode_error() {
    let _exclusive = EXCLUSIVE.lock().await;
    snapshotter();
    let router = Router::new().route(
        "/receipts/garbled",
        get(|| async {
            (
                [("content-type", "application/json")],
                "{\"id\": \"twelve\"}",
            )
        }),
    );
    let server = Server::start(router).await;
    let receipts = ReceiptsClient::builder().url(server.url()).build().unwrap();
    let error = receipts.garbled().await.unwrap_err();
    assert!(error.is_decode(), "{error}");
    let durations = series("http.client.request.duration", "Receipts#garbled");
    assert_eq!(durations.len(), 1, "{durations:?}");
    let (seen, _) = &durations[0];
    assert_eq!(seen.get("http.response.status_code").unwrap(), "200");
    assert_eq!(seen.get("error.type").unwrap(), "decode");
}
