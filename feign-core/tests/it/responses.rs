//! Cases B1–B7 of the reliability test list: response handling against real servers, including
//! a raw TCP server writing exact bytes.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use feign_core::{Options, Retryer};
use feign_test_support::{OrderClient, RawServer, Server};
use http::StatusCode;

fn client_for(url: String) -> OrderClient {
    OrderClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .build()
        .unwrap()
}

/// A body of `total` zero bytes streamed in 64 KiB chunks, without a Content-Length.
pub(crate) fn zeros(total: usize) -> Body {
    let chunks = (0..total / 65536).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![0u8; 65536])));
    Body::from_stream(futures_util::stream::iter(chunks))
}

/// B1: bodies over the cap are errors, and their connection is not reused.
#[tokio::test]
async fn b1_bodies_over_the_cap_fail_and_close_the_connection() {
    let router = Router::new()
        .route("/api/raw", get(|| async { zeros(4 * 1024 * 1024) }))
        .route(
            "/api/orders/{id}",
            get(|| async {
                (
                    [("content-type", "application/json")],
                    r#"{"id":1,"item":"a"}"#,
                )
            }),
        );
    let server = Server::start(router).await;
    let client = OrderClient::builder()
        .url(server.url())
        .max_response_bytes(1024 * 1024)
        .build()
        .unwrap();

    client.get_order(&1).await.unwrap();
    client.get_order(&1).await.unwrap();
    assert_eq!(
        server.connection_count(),
        1,
        "a fully read body leaves the connection reusable"
    );

    let err = client.slow().await.unwrap_err();
    assert!(err.is_body() && err.is_too_large(), "{err:?}");
    assert!(err.to_string().contains("1048576-byte limit"), "{err}");
    client.get_order(&1).await.unwrap();
    assert_eq!(
        server.connection_count(),
        2,
        "the connection of the oversized body was not reused"
    );
}

/// B1: a declared Content-Length over the cap fails before reading the body.
#[tokio::test(start_paused = true)]
async fn b1_declared_length_over_the_cap_fails_at_once() {
    let raw = RawServer::start_with(
        |_| b"HTTP/1.1 200 OK\r\nContent-Length: 10737418240\r\n\r\nabc".to_vec(),
        Duration::from_secs(3600),
    )
    .await;
    let started = tokio::time::Instant::now();
    let err = client_for(raw.url()).slow().await.unwrap_err();
    assert!(err.is_too_large(), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "no read timeout was waited for"
    );
}

/// B2: a gzip bomb is capped after decompression.
#[tokio::test]
async fn b2_gzip_bombs_are_capped_after_decompression() {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&vec![0u8; 16 * 1024 * 1024]).unwrap();
    let bomb = Bytes::from(encoder.finish().unwrap());
    assert!(bomb.len() < 200 * 1024);
    let router = Router::new().route(
        "/api/raw",
        get(move || {
            let bomb = bomb.clone();
            async move {
                (
                    [
                        ("content-encoding", "gzip"),
                        ("content-type", "application/octet-stream"),
                    ],
                    bomb,
                )
            }
        }),
    );
    let server = Server::start(router).await;
    let client = OrderClient::builder()
        .url(server.url())
        .max_response_bytes(1024 * 1024)
        .build()
        .unwrap();
    let err = client.raw().await.unwrap_err();
    assert!(err.is_too_large(), "{err:?}");
    assert_eq!(server.recorded()[0].headers["accept-encoding"], "gzip");
}

/// B3: a server that accepts and never answers hits the method's read timeout.
#[tokio::test(start_paused = true)]
async fn b3_a_silent_server_hits_the_read_timeout() {
    let raw = RawServer::start_with(|_| Vec::new(), Duration::from_secs(3600)).await;
    let started = tokio::time::Instant::now();
    let err = client_for(raw.url()).slow().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(200) && waited < Duration::from_millis(220),
        "{waited:?}"
    );
}

/// B3: a body that stalls half way hits the read timeout between reads.
#[tokio::test(start_paused = true)]
async fn b3_a_stalled_body_hits_the_read_timeout() {
    let raw = RawServer::start_with(
        |_| b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789".to_vec(),
        Duration::from_secs(3600),
    )
    .await;
    let err = client_for(raw.url()).slow().await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(err.to_string().contains("stalled"), "{err}");
}

/// B3: the total timeout bounds the whole call.
#[tokio::test(start_paused = true)]
async fn b3_the_total_timeout_bounds_the_call() {
    let raw = RawServer::start_with(|_| Vec::new(), Duration::from_secs(3600)).await;
    let client = OrderClient::builder()
        .url(raw.url())
        .options(Options::new().total_timeout(Duration::from_millis(50)))
        .build()
        .unwrap();
    let started = tokio::time::Instant::now();
    let err = client.raw().await.unwrap_err();
    assert!(
        err.is_timeout() && err.to_string().contains("total timeout"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_millis(60));
}

/// B4: malformed and truncated responses are typed errors, never short successes.
#[tokio::test]
async fn b4_malformed_responses_are_errors() {
    let cases: [(&str, &'static [u8]); 7] = [
        ("garbage status line", b"HTTP/1.1 2OO OK\r\n\r\n"),
        ("not http", b"hello there\r\n\r\n"),
        (
            "duplicate differing content-length",
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
        ),
        (
            "signed content-length",
            b"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nabcde",
        ),
        (
            "huge chunk size",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\nab\r\n",
        ),
        (
            "truncated chunked body",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        ),
        (
            "closed mid-body",
            b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nonly ten..",
        ),
    ];
    for (name, reply) in cases {
        let raw = RawServer::start(reply).await;
        let result = client_for(raw.url()).raw().await;
        let err = result.expect_err(name);
        assert!(err.is_transport() || err.is_body(), "{name}: {err:?}");
    }
}

/// A 200 reply with `count` small headers and an empty body.
fn with_headers(count: usize) -> &'static [u8] {
    let headers: String = (0..count).map(|i| format!("X-H{i}: v\r\n")).collect();
    format!("HTTP/1.1 200 OK\r\n{headers}Content-Length: 0\r\n\r\n")
        .into_bytes()
        .leak()
}

/// B4: 101 headers and a 500 KiB header block are refused by the transport, while 90 small
/// headers (under the limit, with Content-Length) are read.
#[tokio::test]
async fn b4_oversized_header_blocks_are_errors() {
    let raw = RawServer::start(with_headers(90)).await;
    let response = client_for(raw.url()).raw().await.expect("90 small headers");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers().get("x-h89").unwrap(), "v");

    let huge: &'static [u8] = format!(
        "HTTP/1.1 200 OK\r\nX-Big: {}\r\nContent-Length: 0\r\n\r\n",
        "a".repeat(500 * 1024)
    )
    .into_bytes()
    .leak();
    for (name, reply) in [("101 headers", with_headers(101)), ("500 KiB header", huge)] {
        let raw = RawServer::start(reply).await;
        let err = client_for(raw.url()).raw().await.expect_err(name);
        assert!(err.is_transport(), "{name}: {err:?}");
        assert!(
            !(err.is_connect() || err.is_timeout() || err.is_body() || err.is_status()),
            "{name}: {err:?}"
        );
    }
}

/// B5: redirects are not followed by default; when enabled, only same-origin ones are.
#[tokio::test]
async fn b5_redirects_are_surfaced_by_default_and_same_origin_only_when_enabled() {
    let other = Server::start(Router::new().fallback(get(|| async { "other origin" }))).await;
    let other_url = other.url();
    let router = Router::new()
        .route(
            "/api/raw",
            get(|| async { (StatusCode::FOUND, [("location", "/api/target")]) }),
        )
        .route("/api/target", get(|| async { "followed" }))
        .route(
            "/api/orders/{id}",
            get(move || {
                let to = format!("{other_url}/x");
                async move { (StatusCode::FOUND, [("location", to)]) }
            }),
        );
    let server = Server::start(router).await;

    let err = client_for(server.url()).raw().await.unwrap_err();
    assert_eq!(err.status(), Some(StatusCode::FOUND));

    let following = OrderClient::builder()
        .url(server.url())
        .options(Options::new().follow_redirects(true))
        .retryer(Retryer::never())
        .build()
        .unwrap();
    assert_eq!(following.raw().await.unwrap().text().unwrap(), "followed");
    let err = following.get_order(&1).await.unwrap_err();
    assert_eq!(
        err.status(),
        Some(StatusCode::FOUND),
        "cross-origin redirect is not followed"
    );
    assert_eq!(other.connection_count(), 0);
}

/// Sends on its channel when dropped: tells when the server gave up on a response body.
struct OnDrop(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(done) = self.0.take() {
            let _ = done.send(());
        }
    }
}

/// B6: a huge error body is read only up to the cap and kept only up to 8 KiB. The server
/// streams 64 KiB chunks slowly (so socket buffers hold little) and counts the chunks the
/// client pulled before it closed the connection.
#[tokio::test]
async fn b6_huge_error_bodies_are_bounded() {
    const CHUNK: usize = 64 * 1024;
    const CHUNKS: usize = 128; // 8 MiB
    const CAP: usize = 1024 * 1024;
    let sent = Arc::new(AtomicUsize::new(0));
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let state = Arc::new(Mutex::new(Some((sent.clone(), OnDrop(Some(done_tx))))));
    let router = Router::new().route(
        "/api/raw",
        get(move || {
            let (sent, guard) = state.lock().unwrap().take().expect("one request");
            let chunks = futures_util::stream::unfold((sent, guard), |(sent, guard)| async move {
                if sent.load(Ordering::SeqCst) == CHUNKS {
                    return None;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
                sent.fetch_add(1, Ordering::SeqCst);
                Some((
                    Ok::<_, std::io::Error>(Bytes::from(vec![0u8; CHUNK])),
                    (sent, guard),
                ))
            });
            async move { (StatusCode::INTERNAL_SERVER_ERROR, Body::from_stream(chunks)) }
        }),
    );
    let server = Server::start(router).await;
    let client = OrderClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .max_response_bytes(CAP)
        .build()
        .unwrap();
    let err = client.raw().await.unwrap_err();
    assert_eq!(err.status(), Some(StatusCode::INTERNAL_SERVER_ERROR));
    assert_eq!(err.body().unwrap().len(), 8 * 1024);

    tokio::time::timeout(Duration::from_secs(10), done_rx)
        .await
        .expect("the server stops streaming once the client closes")
        .unwrap();
    let sent = sent.load(Ordering::SeqCst) * CHUNK;
    assert!(
        (CAP..CAP + 16 * CHUNK).contains(&sent),
        "{sent} bytes streamed for a {CAP}-byte cap"
    );
}

/// B7: deep, malformed, out-of-range and mislabelled JSON is a decode error, never a panic.
#[tokio::test]
async fn b7_hostile_json_is_a_decode_error() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases: Vec<(&str, String, &str)> = vec![
        ("deep", deep, "application/json"),
        ("malformed", "{\"id\": 1,".to_owned(), "application/json"),
        ("whitespace", " ".repeat(1024 * 1024), "application/json"),
        (
            "out of range",
            r#"{"id": 1e999999, "item": "a"}"#.to_owned(),
            "application/json",
        ),
        (
            "duplicate keys",
            r#"{"id": 1, "id": 2, "item": "a"}"#.to_owned(),
            "application/json",
        ),
        (
            "wrong content type",
            r#"{"id": 1, "item": "a"}"#.to_owned(),
            "text/html",
        ),
        (
            "trailing garbage",
            r#"{"id": 1, "item": "a"} x"#.to_owned(),
            "application/problem+json",
        ),
    ];
    for (name, body, content_type) in cases {
        let router = Router::new().route(
            "/api/orders/{id}",
            get(move || async move { ([("content-type", content_type)], body) }),
        );
        let server = Server::start(router).await;
        let err = client_for(server.url())
            .get_order(&1)
            .await
            .expect_err(name);
        assert!(err.is_decode(), "{name}: {err:?}");
        assert_eq!(err.method_key(), Some("OrderService#get_order"));
        if name == "wrong content type" {
            assert!(
                err.to_string()
                    .contains("expected content type application/json, got `text/html`"),
                "{err}"
            );
        }
    }
}
