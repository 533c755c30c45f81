//! Streamed request bodies against real servers on loopback: chunked or with their length, a
//! cut-off upload never sent twice, a stream failing midway, files checked before sending, the
//! read timeout counted from the body's last chunk.

use std::io::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::routing::any;
use axum::Router;
use bytes::Bytes;
use feign_core::resolve::{ChooseRequest, Chosen, Resolver};
use feign_core::{feign_client, BodyStream, Error, FileBody, Options, Retryer};
use feign_test_support::{closed_port_url, serve, TempDir};
use futures_util::{stream, StreamExt};
use http_body_util::BodyExt;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

#[feign_client("uploads", url = "http://127.0.0.1:1")]
trait Uploads {
    #[put("/upload")]
    async fn put_stream(&self, #[body] body: BodyStream) -> Result<String, Error>;

    #[put("/upload")]
    async fn put_file(&self, #[body] file: FileBody) -> Result<String, Error>;

    #[put("/upload")]
    async fn put_bytes(&self, #[body] body: Vec<u8>) -> Result<String, Error>;
}

/// Answers with how the body came (`chunked` or `length N`) and the body itself; counts the
/// bodies it read whole.
fn echo() -> (Router, Arc<AtomicUsize>) {
    let whole = Arc::new(AtomicUsize::new(0));
    let counter = whole.clone();
    let handler = move |request: Request| {
        let counter = counter.clone();
        async move {
            let framing = match request.headers().get("content-length") {
                Some(length) => format!("length {}", length.to_str().unwrap()),
                None => request
                    .headers()
                    .get("transfer-encoding")
                    .map(|te| te.to_str().unwrap().to_owned())
                    .unwrap_or_default(),
            };
            match request.into_body().collect().await {
                Ok(body) => {
                    counter.fetch_add(1, Ordering::SeqCst);
                    let body = String::from_utf8_lossy(&body.to_bytes()).into_owned();
                    (http::StatusCode::OK, format!("{framing}|{body}"))
                }
                Err(_) => (http::StatusCode::BAD_REQUEST, "incomplete".to_owned()),
            }
        }
    };
    (Router::new().route("/upload", any(handler)), whole)
}

fn client(url: &str) -> UploadsClient {
    UploadsClient::builder().url(url).build().unwrap()
}

fn chunks(parts: &[&'static str]) -> BodyStream {
    let items: Vec<Result<Bytes, std::io::Error>> = parts
        .iter()
        .map(|p| Ok(Bytes::from_static(p.as_bytes())))
        .collect();
    BodyStream::new(stream::iter(items))
}

/// `xyz`, with its length.
fn xyz() -> BodyStream {
    BodyStream::sized(
        stream::iter([Ok::<_, std::io::Error>(Bytes::from("xyz"))]),
        3,
    )
}

/// Sends `xyz` with its length, then `a` chunked.
async fn sized_then_chunked(client: &UploadsClient) {
    client.put_stream(xyz()).await.unwrap();
    client.put_stream(chunks(&["a"])).await.unwrap();
}

#[tokio::test]
async fn a_stream_goes_chunked_and_a_sized_stream_or_file_with_its_length() {
    let (router, _) = echo();
    let client = client(&serve(router).await);
    assert_eq!(
        client.put_stream(chunks(&["ab", "cd", "e"])).await.unwrap(),
        "chunked|abcde"
    );
    assert_eq!(client.put_stream(xyz()).await.unwrap(), "length 3|xyz");

    let dir = TempDir::new("upload-file");
    let path = dir.write("data.txt", "file contents");
    let file = FileBody::open(&path).await.unwrap();
    assert_eq!(file.length(), 13);
    assert_eq!(
        client.put_file(file).await.unwrap(),
        "length 13|file contents"
    );
}

#[tokio::test]
async fn a_stream_that_fails_midway_fails_the_call_and_no_body_arrives_whole() {
    let (router, whole) = echo();
    let client = client(&serve(router).await);
    let failing = stream::iter([
        Ok(Bytes::from_static(b"first chunk")),
        Err(std::io::Error::other("disk on fire")),
    ]);
    let error = client
        .put_stream(BodyStream::new(failing))
        .await
        .unwrap_err();
    let shown = error.to_string();
    assert!(error.is_transport(), "{shown}");
    assert!(
        shown.contains("request body stream failed") && shown.contains("disk on fire"),
        "{shown}"
    );
    // A sized stream that ends short is refused the same way, not sent as a shorter body.
    let short = BodyStream::sized(
        stream::iter([Ok::<_, std::io::Error>(Bytes::from("ab"))]),
        5,
    );
    let error = client.put_stream(short).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("ended after 2 of its declared 5 bytes"),
        "{error}"
    );
    assert_eq!(whole.load(Ordering::SeqCst), 0, "no body was read whole");
}

/// A server that reads `limit` bytes of each connection, then resets it; counts connections.
async fn resetting_server(limit: usize) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let counter = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 8192];
                let mut read = 0;
                while read < limit {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => read += n,
                    }
                }
                // A zero linger makes the close a reset (and does not block the thread).
                #[allow(deprecated)]
                let _ = socket.set_linger(Some(Duration::ZERO));
                drop(socket);
            });
        }
    });
    (format!("http://{address}"), connections)
}

/// An endless stream of 16 KiB chunks, each after a short pause.
fn endless() -> BodyStream {
    let chunk = Bytes::from(vec![b'x'; 16 * 1024]);
    BodyStream::new(stream::repeat(chunk).then(|chunk| async move {
        tokio::time::sleep(Duration::from_millis(2)).await;
        Ok::<_, std::io::Error>(chunk)
    }))
}

#[tokio::test]
async fn a_streamed_body_cut_off_by_the_server_is_not_sent_again() {
    let (url, connections) = resetting_server(64 * 1024).await;
    let client = UploadsClient::builder()
        .url(&url)
        .retryer(
            Retryer::default()
                .period(Duration::from_millis(1))
                .jitter(false),
        )
        .build()
        .unwrap();
    // PUT is idempotent: the retryer would try a buffered body again after a transport error.
    let error = client.put_stream(endless()).await.unwrap_err();
    let shown = error.to_string();
    assert!(error.is_transport(), "{shown}");
    assert!(
        shown.contains("streamed request body") && shown.contains("not sent again"),
        "{shown}"
    );
    assert_eq!(connections.load(Ordering::SeqCst), 1, "one attempt only");

    // The same failure with a buffered body is retried: the count above could have grown.
    let error = client.put_bytes(vec![b'y'; 256 * 1024]).await.unwrap_err();
    assert!(error.is_transport(), "{error}");
    assert!(
        connections.load(Ordering::SeqCst) > 2,
        "buffered bodies are retried"
    );
}

/// Sends the first attempt to `first`, every later one to `then`.
struct FirstThen {
    first: String,
    then: String,
}

impl Resolver for FirstThen {
    fn choose(&self, request: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        let (url, id) = if request.attempt == 1 {
            (&self.first, "first")
        } else {
            (&self.then, "then")
        };
        Ok(Chosen::new(url.as_str(), id))
    }
}

#[tokio::test]
async fn a_stream_not_yet_read_is_sent_on_the_next_instance_after_a_connect_failure() {
    let (router, _) = echo();
    let live = serve(router).await;
    let client = UploadsClient::builder()
        .load_balancer(FirstThen {
            first: closed_port_url(),
            then: live,
        })
        .retryer(Retryer::default().period(Duration::from_millis(1)))
        .build()
        .unwrap();
    assert_eq!(
        client
            .put_stream(chunks(&["still ", "whole"]))
            .await
            .unwrap(),
        "chunked|still whole"
    );
}

#[tokio::test]
async fn an_unreadable_file_is_refused_before_anything_is_sent() {
    let dir = TempDir::new("upload-missing");
    let missing = dir.0.join("missing.bin");
    let error = FileBody::open(&missing).await.unwrap_err();
    assert!(error.is_request(), "{error}");
    assert!(error.to_string().contains("missing.bin"), "{error}");
    assert!(error.to_string().contains("could not be opened"), "{error}");
    let error = FileBody::open(&dir.0).await.unwrap_err();
    assert!(
        error.to_string().contains("is not a regular file"),
        "{error}"
    );
}

#[tokio::test]
async fn a_file_that_shrinks_after_opening_fails_the_call() {
    let (router, whole) = echo();
    let client = client(&serve(router).await);
    let dir = TempDir::new("upload-shrinks");
    let path = dir.write("data.bin", &"z".repeat(100_000));
    let file = FileBody::open(&path).await.unwrap();
    std::fs::File::create(&path)
        .unwrap()
        .write_all(b"short")
        .unwrap();
    let error = client.put_file(file).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("ended after 5 of its declared 100000 bytes"),
        "{error}"
    );
    assert_eq!(whole.load(Ordering::SeqCst), 0);
}

/// Five chunks, one every `every`.
fn slow(every: Duration) -> BodyStream {
    BodyStream::new(stream::iter(0..5).then(move |_| async move {
        tokio::time::sleep(every).await;
        Ok::<_, std::io::Error>(Bytes::from_static(b"."))
    }))
}

#[tokio::test]
async fn the_read_timeout_counts_from_the_last_chunk_of_a_streamed_body() {
    let (router, _) = echo();
    let client = UploadsClient::builder()
        .url(serve(router).await)
        .options(Options::default().read_timeout(Duration::from_millis(400)))
        .build()
        .unwrap();
    // 1.25 s of upload in all, never 400 ms without a chunk.
    assert_eq!(
        client
            .put_stream(slow(Duration::from_millis(250)))
            .await
            .unwrap(),
        "chunked|....."
    );
    let error = client
        .put_stream(slow(Duration::from_millis(700)))
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");
}

#[tokio::test]
async fn a_transport_of_buffered_bodies_refuses_a_stream_before_sending() {
    let (router, whole) = echo();
    let service =
        tower::ServiceExt::map_request(router, |req: http::Request<Bytes>| req.map(Body::from));
    let client = UploadsClient::builder()
        .url("http://uploads.test")
        .tower_client(service)
        .build()
        .unwrap();
    assert!(client
        .put_bytes(b"ok".to_vec())
        .await
        .unwrap()
        .ends_with("|ok"));
    let error = client.put_stream(chunks(&["a"])).await.unwrap_err();
    assert!(error.is_request(), "{error}");
    assert!(
        error.to_string().contains("buffered bodies only"),
        "{error}"
    );
    assert_eq!(whole.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_open_file_is_sent_from_its_position_on() {
    use std::io::{Seek as _, SeekFrom};

    let (router, _) = echo();
    let client = client(&serve(router).await);
    let dir = TempDir::new("upload-open-file");
    let path = dir.write("data.txt", "skip:the rest");
    let mut file = std::fs::File::open(&path).unwrap();
    file.seek(SeekFrom::Start(5)).unwrap();
    let body = FileBody::from_file(tokio::fs::File::from_std(file))
        .await
        .unwrap();
    assert_eq!(client.put_file(body).await.unwrap(), "length 8|the rest");
    let file = tokio::fs::File::open(&path).await.unwrap();
    assert_eq!(
        client.put_stream(BodyStream::from(file)).await.unwrap(),
        "chunked|skip:the rest"
    );
}

/// Answers uploads from what it was given: the stand-ins for what the failed call consumed.
struct Fallback;

#[feign_core::async_trait]
impl Uploads for Fallback {
    async fn put_stream(&self, mut body: BodyStream) -> Result<String, Error> {
        let first = body.next().await.expect("one item");
        Ok(format!(
            "fallback: {}",
            first.expect_err("a consumed stream")
        ))
    }

    async fn put_file(&self, file: FileBody) -> Result<String, Error> {
        Ok(format!("fallback for {file:?}"))
    }

    async fn put_bytes(&self, body: Vec<u8>) -> Result<String, Error> {
        Ok(format!("fallback with {} bytes", body.len()))
    }
}

#[tokio::test]
async fn a_fallback_gets_what_the_failed_call_did_not_consume() {
    let failing = Router::new().route(
        "/upload",
        any(|| async { http::StatusCode::SERVICE_UNAVAILABLE }),
    );
    let client = UploadsClient::builder()
        .url(serve(failing).await)
        .retryer(Retryer::never())
        .fallback(Arc::new(Fallback))
        .build()
        .unwrap();
    let answer = client.put_stream(chunks(&["a", "b"])).await.unwrap();
    assert!(
        answer.contains("consumed by the call a fallback stands in for"),
        "{answer}"
    );
    let dir = TempDir::new("upload-fallback");
    let file = FileBody::open(dir.write("kept.txt", "abc")).await.unwrap();
    let answer = client.put_file(file).await.unwrap();
    assert!(answer.contains("kept.txt"), "{answer}");
    let answer = client.put_bytes(vec![7; 3]).await.unwrap();
    assert_eq!(answer, "fallback with 3 bytes");
}

#[tokio::test]
async fn a_stream_is_read_as_the_server_takes_it_never_ahead_of_it() {
    // The server reads 1 MiB, then nothing: what the client pulled from a 1 GiB stream is
    // bounded by socket buffers, not by the body.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (read_enough, mut wait) = tokio::sync::mpsc::channel::<()>(1);
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buffer = vec![0u8; 64 * 1024];
        let mut read = 0;
        while read < 1 << 20 {
            read += socket.read(&mut buffer).await.unwrap();
        }
        read_enough.send(()).await.unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    let pulled = Arc::new(AtomicUsize::new(0));
    let counter = pulled.clone();
    let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
    let gib = stream::repeat(chunk).take(16 * 1024).map(move |chunk| {
        counter.fetch_add(chunk.len(), Ordering::SeqCst);
        Ok::<_, std::io::Error>(chunk)
    });
    let client = client(&url);
    let call =
        tokio::spawn(async move { client.put_stream(BodyStream::sized(gib, 1 << 30)).await });
    wait.recv().await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let taken = pulled.load(Ordering::SeqCst);
    call.abort();
    assert!(taken >= 1 << 20, "{taken}");
    assert!(
        taken < 32 << 20,
        "{taken} bytes pulled ahead of a stalled server"
    );
}

#[tokio::test]
async fn interceptors_see_a_streamed_body_and_its_length() {
    let (router, _) = echo();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    let client = UploadsClient::builder()
        .url(serve(router).await)
        .interceptor(feign_core::interceptor::interceptor_fn(move |template| {
            kept.lock().unwrap().push((
                template.is_body_streamed(),
                template.body_length(),
                template.body().len(),
            ));
            Ok(())
        }))
        .build()
        .unwrap();
    sized_then_chunked(&client).await;
    client.put_bytes(b"four".to_vec()).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [(true, Some(3), 0), (true, None, 0), (false, Some(4), 4)]
    );
}

#[tokio::test]
async fn the_full_log_names_a_streamed_body_and_its_length() {
    let (captured, _guard) = feign_test_support::Captured::install();
    let (router, _) = echo();
    let client = UploadsClient::builder()
        .url(serve(router).await)
        .log_level(feign_core::LogLevel::Full)
        .build()
        .unwrap();
    sized_then_chunked(&client).await;
    let text = captured.text();
    assert!(text.contains("(streamed body, 3 bytes)"), "{text}");
    assert!(text.contains("(streamed body, length unknown)"), "{text}");
}
