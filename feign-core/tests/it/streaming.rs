//! Streaming responses against real loopback servers: chunks reach the caller as they arrive,
//! a body that breaks off or stalls is an error item, the optional cap fails loudly, and the
//! call's outcome (balancer, breaker) is recorded when the head arrives.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use feign_core::resolve::{AttemptOutcome, CallObserver, ChooseRequest, Chosen, Resolver};
use feign_core::{feign_client, CircuitBreakerConfig, Error, LogLevel, Retryer, StreamingResponse};
use feign_test_support::{quick_retryer, Captured, RawServer, Server};
use futures_util::StreamExt;
use http::StatusCode;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::time::{timeout, Instant};

use crate::responses::zeros;

/// Generates `FilesClient`.
#[feign_client("files")]
pub(crate) trait Files {
    /// The file, streamed.
    #[get("/files/{name}")]
    async fn download(&self, #[path] name: &str) -> Result<StreamingResponse, Error>;

    /// The file, streamed; 404 is `None`.
    #[get("/files/{name}")]
    async fn find(&self, #[path] name: &str) -> Result<Option<StreamingResponse>, Error>;

    /// The file, streamed, with a short read timeout.
    #[get("/files/{name}")]
    #[options(read_timeout_ms = 300)]
    async fn impatient(&self, #[path] name: &str) -> Result<StreamingResponse, Error>;

    /// The file, streamed, the call bounded by a short total timeout.
    #[get("/files/{name}")]
    #[options(total_timeout_ms = 300)]
    async fn bounded(&self, #[path] name: &str) -> Result<StreamingResponse, Error>;
}

fn client(url: String) -> FilesClient {
    FilesClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .build()
        .unwrap()
}

/// Bounds every wait of a test, so a regression fails rather than hangs.
const PATIENCE: Duration = Duration::from_secs(10);

async fn next(response: &mut StreamingResponse) -> Option<Result<Bytes, Error>> {
    timeout(PATIENCE, response.next())
        .await
        .expect("the stream answered")
}

type Chunks = mpsc::UnboundedSender<Result<Bytes, std::io::Error>>;

/// A server whose `/files/held` body is fed by the test, chunk by chunk: an `Err` aborts the
/// body mid-way, dropping the sender ends it. One request per server.
async fn held_server() -> (Server, Chunks) {
    let (sender, receiver) = mpsc::unbounded_channel::<Result<Bytes, std::io::Error>>();
    let receiver = Arc::new(Mutex::new(Some(receiver)));
    let router = Router::new().route(
        "/files/held",
        get(move || {
            let receiver = receiver.lock().unwrap().take().expect("one request");
            async move {
                let chunks = futures_util::stream::unfold(receiver, |mut receiver| async move {
                    receiver.recv().await.map(|chunk| (chunk, receiver))
                });
                ([("x-file", "held")], Body::from_stream(chunks))
            }
        }),
    );
    (Server::start(router).await, sender)
}

fn broken_pipe() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the disk went away")
}

/// `part`, then, once the head and `part` are surely on the wire, a failure that aborts the
/// body.
fn part_then_break() -> Body {
    let chunks = futures_util::stream::unfold(0, |step| async move {
        match step {
            0 => Some((Ok(Bytes::from_static(b"part")), 1)),
            1 => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Some((Err(broken_pipe()), 2))
            }
            _ => None,
        }
    });
    Body::from_stream(chunks)
}

#[tokio::test]
async fn chunks_reach_the_caller_before_the_body_ends() {
    let (server, chunks) = held_server().await;
    chunks.send(Ok(Bytes::from_static(b"first"))).unwrap();
    let mut response = timeout(PATIENCE, client(server.url()).download("held"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["x-file"], "held");
    assert_eq!(response.content_length(), None);

    // The server has not sent the rest: the first chunk is the caller's already.
    assert_eq!(next(&mut response).await.unwrap().unwrap(), "first");
    chunks.send(Ok(Bytes::from_static(b"second"))).unwrap();
    assert_eq!(next(&mut response).await.unwrap().unwrap(), "second");
    drop(chunks);
    assert!(next(&mut response).await.is_none());
    assert_eq!(response.bytes_received(), 11);
    assert!(futures_util::stream::FusedStream::is_terminated(&response));
}

/// Reads `response` through the `AsyncRead` adapter until it fails: the error and what was
/// read before it.
async fn read_to_error(response: StreamingResponse) -> (std::io::Error, Vec<u8>) {
    let mut read = Vec::new();
    let error = timeout(PATIENCE, response.into_async_read().read_to_end(&mut read))
        .await
        .expect("the reader answered")
        .expect_err("no clean end");
    (error, read)
}

#[tokio::test]
async fn a_body_that_breaks_off_yields_an_error_never_a_clean_end() {
    let (server, chunks) = held_server().await;
    chunks.send(Ok(Bytes::from_static(b"part"))).unwrap();
    let mut response = client(server.url()).download("held").await.unwrap();
    assert_eq!(next(&mut response).await.unwrap().unwrap(), "part");
    chunks.send(Err(broken_pipe())).unwrap();
    let error = next(&mut response).await.unwrap().unwrap_err();
    assert!(error.is_body(), "{error:?}");
    assert_eq!(error.method_key(), Some("Files#download"));
    assert!(
        next(&mut response).await.is_none(),
        "the stream ends after its error"
    );

    // A declared length the connection closes short of.
    let raw = RawServer::start(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b").await;
    let response = client(raw.url()).download("short").await.unwrap();
    let items: Vec<_> = timeout(PATIENCE, response.collect::<Vec<_>>())
        .await
        .unwrap();
    let last = items.last().expect("at least the error");
    assert!(last.as_ref().is_err_and(Error::is_body), "{items:?}");
    let received: usize = items.iter().flatten().map(Bytes::len).sum();
    assert!(received <= 10, "{items:?}");

    // Through the AsyncRead adapter, the same break is an I/O error, not an end of file.
    let (error, _) = read_to_error(client(raw.url()).download("short").await.unwrap()).await;
    let inner = error.get_ref().and_then(|e| e.downcast_ref::<Error>());
    assert!(inner.is_some_and(Error::is_body), "{error:?}");
}

#[tokio::test]
async fn a_stalled_body_times_out_between_chunks_and_a_slow_one_does_not() {
    let raw = RawServer::start_with(
        |_| b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".to_vec(),
        Duration::from_secs(3600),
    )
    .await;
    let files = client(raw.url());
    let mut response = files.impatient("stalled").await.unwrap();
    assert_eq!(next(&mut response).await.unwrap().unwrap(), "abc");
    let waited = Instant::now();
    let error = next(&mut response).await.unwrap().unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    assert!(error.to_string().contains("stalled for 300ms"), "{error}");
    assert!(waited.elapsed() >= Duration::from_millis(300));
    assert!(next(&mut response).await.is_none());

    // The adapter reports a stall as `TimedOut`.
    let (error, read) = read_to_error(files.impatient("stalled").await.unwrap()).await;
    assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
    assert_eq!(read, b"abc");

    // A byte every 50 ms, for longer than the 300 ms read timeout in all: not a stall.
    let trickle = RawServer::trickling(
        b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n",
        Duration::from_millis(50),
    )
    .await;
    let files = client(trickle.url());
    let mut response = files.impatient("slow").await.unwrap();
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(800) {
        next(&mut response).await.unwrap().unwrap();
    }

    // The total timeout bounds the call until the head, not the reading of the body.
    let mut response = files.bounded("slow").await.unwrap();
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(800) {
        next(&mut response).await.unwrap().unwrap();
    }
    let hung = RawServer::start_with(|_| Vec::new(), Duration::from_secs(3600)).await;
    let error = client(hung.url()).bounded("never").await.unwrap_err();
    assert!(
        error.is_timeout() && error.to_string().contains("total timeout"),
        "{error}"
    );
}

#[tokio::test]
async fn the_buffer_cap_does_not_apply_and_an_optional_cap_fails_loudly() {
    let router = Router::new()
        .route("/files/big", get(|| async { zeros(4 << 20) }))
        .route("/files/declared", get(|| async { vec![7u8; 5000] }));
    let server = Server::start(router).await;
    let files = FilesClient::builder()
        .url(server.url())
        .max_response_bytes(1 << 20)
        .build()
        .unwrap();

    let whole = files.download("big").await.unwrap().bytes().await.unwrap();
    assert_eq!(
        whole.len(),
        4 << 20,
        "the 1 MiB buffer cap is not a stream's"
    );

    let mut capped = files.download("big").await.unwrap().with_limit(2 << 20);
    let mut handed_out = 0;
    let error = loop {
        match next(&mut capped).await.expect("no clean end over the cap") {
            Ok(chunk) => handed_out += chunk.len(),
            Err(error) => break error,
        }
    };
    assert!(error.is_too_large(), "{error:?}");
    assert!(error.to_string().contains("2097152-byte limit"), "{error}");
    assert_eq!(
        handed_out,
        2 << 20,
        "every chunk within the cap, none past it"
    );
    assert!(next(&mut capped).await.is_none());

    // A declared length over the cap fails before any chunk; one at the cap passes.
    let mut declared = files.download("declared").await.unwrap().with_limit(4999);
    assert_eq!(declared.content_length(), Some(5000));
    assert!(next(&mut declared)
        .await
        .unwrap()
        .unwrap_err()
        .is_too_large());
    let exact = files.download("declared").await.unwrap().with_limit(5000);
    assert_eq!(exact.bytes().await.unwrap().len(), 5000);
}

#[tokio::test]
async fn errors_are_decoded_and_retried_before_the_head_only() {
    let flaky_calls = Arc::new(AtomicUsize::new(0));
    let calls = flaky_calls.clone();
    let router = Router::new()
        .route(
            "/files/flaky",
            get(move || {
                let call = calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    if call == 0 {
                        (StatusCode::SERVICE_UNAVAILABLE, "busy")
                    } else {
                        (StatusCode::OK, "payload")
                    }
                }
            }),
        )
        .route(
            "/files/down",
            get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "down for maintenance") }),
        );
    let server = Server::start(router).await;
    let files = FilesClient::builder()
        .url(server.url())
        .retryer(quick_retryer(3))
        .build()
        .unwrap();

    let response = files.download("flaky").await.unwrap();
    assert_eq!(response.bytes().await.unwrap(), "payload");
    assert_eq!(flaky_calls.load(Ordering::SeqCst), 2, "the 503 was retried");

    let error = files.download("down").await.unwrap_err();
    assert_eq!(error.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(error.body().unwrap(), "down for maintenance");

    assert!(files.find("missing").await.unwrap().is_none());
    let error = files.download("missing").await.unwrap_err();
    assert_eq!(error.status(), Some(StatusCode::NOT_FOUND));
    let dismissing = FilesClient::builder()
        .url(server.url())
        .dismiss_404(true)
        .build()
        .unwrap();
    let missing = dismissing.download("missing").await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(missing.bytes().await.unwrap().is_empty());

    // A body that breaks off after the head is the reader's: no second request is made.
    let breaks =
        Server::start(Router::new().route("/files/breaks", get(|| async { part_then_break() })))
            .await;
    let files = FilesClient::builder()
        .url(breaks.url())
        .retryer(quick_retryer(3))
        .build()
        .unwrap();
    let body = files.download("breaks").await.unwrap().bytes().await;
    assert!(body.unwrap_err().is_body());
    assert_eq!(breaks.request_count(), 1);
}

/// Every outcome the balancer's observer heard, as text.
#[derive(Default)]
struct Outcomes(Mutex<Vec<String>>);

impl CallObserver for Outcomes {
    fn on_complete(&self, outcome: &AttemptOutcome<'_>, _elapsed: Duration) {
        self.0.lock().unwrap().push(format!("{outcome:?}"));
    }
}

struct OneInstance {
    url: String,
    outcomes: Arc<Outcomes>,
}

impl Resolver for OneInstance {
    fn choose(&self, _request: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        Ok(Chosen::new(self.url.as_str(), "a").with_observer(self.outcomes.clone()))
    }
}

#[tokio::test]
async fn the_balancer_hears_the_outcome_when_the_head_arrives() {
    let (server, chunks) = held_server().await;
    let outcomes = Arc::new(Outcomes::default());
    let files = FilesClient::builder()
        .load_balancer(OneInstance {
            url: server.url(),
            outcomes: outcomes.clone(),
        })
        .build()
        .unwrap();
    let mut response = files.download("held").await.unwrap();
    assert_eq!(
        *outcomes.0.lock().unwrap(),
        ["Response(200)"],
        "recorded at the head, the body not sent yet"
    );
    chunks.send(Err(broken_pipe())).unwrap();
    assert!(next(&mut response).await.unwrap().is_err());
    assert_eq!(
        outcomes.0.lock().unwrap().len(),
        1,
        "the body's failure is not a second outcome"
    );
}

#[tokio::test]
async fn the_breaker_counts_the_head_not_the_body() {
    let router = Router::new()
        .route("/files/breaks", get(|| async { part_then_break() }))
        .route(
            "/files/down",
            get(|| async { StatusCode::SERVICE_UNAVAILABLE }),
        );
    let server = Server::start(router).await;
    let files = FilesClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .circuit_breaker(
            CircuitBreakerConfig::default()
                .sliding_window_size(2)
                .minimum_number_of_calls(2)
                .failure_rate_threshold(100.0),
        )
        .build()
        .unwrap();
    for _ in 0..4 {
        let body = files.download("breaks").await.unwrap().bytes().await;
        assert!(body.unwrap_err().is_body());
    }
    for _ in 0..2 {
        let error = files.download("down").await.unwrap_err();
        assert_eq!(error.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    }
    let error = files.download("breaks").await.unwrap_err();
    assert!(error.is_circuit_open(), "{error:?}");
}

#[tokio::test]
async fn the_async_read_adapter_reads_the_whole_body() {
    let router = Router::new().route("/files/big", get(|| async { zeros(1 << 20) }));
    let server = Server::start(router).await;
    let response = client(server.url()).download("big").await.unwrap();
    let mut reader = response.into_async_read();
    let mut all = Vec::new();
    reader.read_to_end(&mut all).await.unwrap();
    assert_eq!(all.len(), 1 << 20);
    assert!(all.iter().all(|&b| b == 0));
    assert_eq!(reader.get_ref().bytes_received(), 1 << 20);
}

#[tokio::test]
async fn the_head_is_logged_with_secrets_redacted_and_the_body_left_alone() {
    let (captured, _guard) = Captured::install();
    let router = Router::new().route(
        "/files/report",
        get(|| async {
            (
                [("set-cookie", "session=c00k1e"), ("x-visible", "shown")],
                "body-text",
            )
        }),
    );
    let server = Server::start(router).await;
    let files = FilesClient::builder()
        .url(server.url())
        .log_level(LogLevel::Full)
        .build()
        .unwrap();
    let response = files.download("report").await.unwrap();
    let logs = captured.text();
    assert!(
        logs.contains("<-- 200") && logs.contains("body streamed"),
        "{logs}"
    );
    assert!(logs.contains("x-visible"), "{logs}");
    let shown = format!("{logs}\n{response:?}");
    assert!(!shown.contains("c00k1e"), "a secret leaked: {shown}");
    assert_eq!(response.bytes().await.unwrap(), "body-text");
    assert!(
        !captured.text().contains("body-text"),
        "the streamed body is not logged"
    );
}
