//! The streaming memory bound, measured on this process: 256 MiB downloaded through a
//! `StreamingResponse` (by a plain client and by one with a `Builder::layer`, whose layer sees
//! the response with its body still streaming), uploaded as a `BodyStream` and uploaded as a
//! multipart `FilePart`, each
//! between a generated client and an axum server on 127.0.0.1 in this process, must each raise
//! resident memory by less than 32 MiB at its peak. A client that buffered a body, on either
//! side of the wire, would hold all 256 MiB of it.
//!
//! Each case resets the kernel's peak (`VmHWM`, by writing `5` to `/proc/self/clear_refs`),
//! reads `VmRSS` before it starts and `VmHWM` once it is over: the growth is the highest resident
//! memory the case reached above where it began. The download also pauses its reader after
//! 16 MiB, waits until the server's stream stops being pulled, and bounds what was pulled
//! ahead of the reader outside the kernel's socket buffers (read from `/proc/self/net/tcp`):
//! the body is read as its reader reads, not ahead of it.
//!
//! A binary of its own without the test harness: resident memory is the whole process's, so
//! the cases run one after another with nothing else beside them, after a small warm-up of every
//! path (connections, threads, the allocator's arenas). Where `/proc` does not tell (not Linux),
//! it says so and passes.
//!
//! Run with `cargo test -p feign-rs-core --test streaming_memory`. A case is a function of the
//! [`Fixture`] named in [`CASES`]: adding one is a line there.

use std::future::Future;
use std::io::Write as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Multipart, State};
use axum::routing::{get, post, put};
use axum::Router;
use bytes::Bytes;
use feign_core::multipart::FilePart;
use feign_core::{feign_client, BodyStream, Error, Response, Retryer, StreamingResponse};
use feign_test_support::TempDir;
use futures_util::{stream, StreamExt};
use tower::util::MapResponseLayer;

const MIB: u64 = 1 << 20;
/// What each case moves.
const SIZE: u64 = 256 * MIB;
/// What each case may add to resident memory at its peak.
const GROWTH_BOUND: u64 = 32 * MIB;
/// Where the download's reader pauses.
const PAUSE_AT: u64 = 16 * MIB;
/// What the download may have pulled ahead of its paused reader, besides what the sockets hold:
/// hyper's buffers on both sides, a few hundred KiB each.
const READ_AHEAD_BOUND: u64 = 4 * MIB;
/// The size of the chunks the server and the upload streams hand over.
const CHUNK: usize = 64 * 1024;

/// The client under test.
#[feign_client("files")]
trait Files {
    /// `SIZE` bytes, streamed.
    #[get("/download/{size}")]
    async fn download(&self, #[path] size: u64) -> Result<StreamingResponse, Error>;

    /// Sends `body`; the answer is the byte count the server read.
    #[put("/upload")]
    async fn upload(&self, #[body] body: BodyStream) -> Result<String, Error>;

    /// Sends `file` as a part; the answer is the byte count the server read of it.
    #[multipart]
    #[post("/multipart")]
    async fn multipart(&self, #[part("file")] file: FilePart) -> Result<String, Error>;
}

/// What the cases share: the server, a client of it, and the file the multipart case sends.
struct Fixture {
    client: FilesClient,
    /// A client of the same server with a `Builder::layer` that counts the responses it sees.
    layered: FilesClient,
    /// The responses `layered`'s layer has seen.
    seen_by_layer: Arc<AtomicU64>,
    /// The server's port, to find the connections in `/proc/self/net/tcp`.
    port: u16,
    /// Bytes the server's download streams have handed to hyper.
    produced: Arc<AtomicU64>,
    /// A sparse file of `SIZE` bytes (zeros, occupying no disk).
    file: std::path::PathBuf,
    /// A sparse file of 1 MiB, for the warm-up.
    small_file: std::path::PathBuf,
    _dir: TempDir,
}

/// What a case runs: a line on what it saw beyond the memory, or what went wrong.
type Run<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + 'a>>;

/// One measured case.
struct Case {
    name: &'static str,
    run: for<'a> fn(&'a Fixture) -> Run<'a>,
}

/// The cases, in order. A download through another client is `download(fixture, &that_client)`.
const CASES: &[Case] = &[
    Case {
        name: "download: a StreamingResponse",
        run: |fixture| Box::pin(download(fixture, &fixture.client)),
    },
    Case {
        name: "download: a StreamingResponse through a layer",
        run: |fixture| Box::pin(layered_download(fixture)),
    },
    Case {
        name: "upload: a BodyStream",
        run: |fixture| Box::pin(upload(fixture)),
    },
    Case {
        name: "upload: a multipart FilePart",
        run: |fixture| Box::pin(multipart(fixture)),
    },
];

fn main() {
    if read_status("VmRSS:").is_none() || reset_peak().is_err() {
        println!("streaming_memory: skipped, /proc/self/status or /proc/self/clear_refs cannot be used here (not Linux?)");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let failures = runtime.block_on(async {
        let fixture = Fixture::start().await;
        fixture.warm_up().await;
        let mut failures = 0;
        for case in CASES {
            let began = Instant::now();
            reset_peak().expect("the peak can be reset");
            let before = read_status("VmRSS:").expect("VmRSS");
            let outcome = (case.run)(&fixture).await;
            let peak = read_status("VmHWM:").expect("VmHWM");
            let growth = peak.saturating_sub(before);
            let verdict = match &outcome {
                Ok(_) if growth < GROWTH_BOUND => "ok",
                _ => {
                    failures += 1;
                    "FAILED"
                }
            };
            println!(
                "{}: {verdict}: resident memory {} MiB before, peak {} MiB (+{:.1} MiB, bound {} MiB), {:.1} s; {}",
                case.name,
                before / MIB,
                peak / MIB,
                growth as f64 / MIB as f64,
                GROWTH_BOUND / MIB,
                began.elapsed().as_secs_f64(),
                outcome.unwrap_or_else(|error| error),
            );
        }
        failures
    });
    println!("{} passed, {failures} failed", CASES.len() - failures);
    assert_eq!(failures, 0, "the streaming memory bound does not hold");
}

impl Fixture {
    async fn start() -> Fixture {
        let produced = Arc::new(AtomicU64::new(0));
        let router = Router::new()
            .route("/download/{size}", get(serve_download))
            .route("/upload", put(count_upload))
            .route("/multipart", post(count_parts))
            .layer(DefaultBodyLimit::disable())
            .with_state(produced.clone());
        let url = feign_test_support::serve(router).await;
        let port = url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("a port");
        let client = FilesClient::builder()
            .url(url.clone())
            .retryer(Retryer::never())
            .build()
            .expect("a client");
        let seen_by_layer = Arc::new(AtomicU64::new(0));
        let seen = seen_by_layer.clone();
        let layered = FilesClient::builder()
            .url(url)
            .retryer(Retryer::never())
            .layer(MapResponseLayer::new(move |response: Response| {
                seen.fetch_add(1, Ordering::SeqCst);
                response
            }))
            .build()
            .expect("a layered client");
        let dir = TempDir::new("streaming-memory");
        let sparse = |name: &str, size: u64| {
            let path = dir.0.join(name);
            let file = std::fs::File::create(&path).expect("a file");
            file.set_len(size).expect("a sparse file");
            path
        };
        Fixture {
            client,
            layered,
            seen_by_layer,
            port,
            produced,
            file: sparse("large.bin", SIZE),
            small_file: sparse("small.bin", MIB),
            _dir: dir,
        }
    }

    /// Every path once with 1 MiB, so connections, worker threads and allocator arenas exist
    /// before the first reading.
    async fn warm_up(&self) {
        for client in [&self.client, &self.layered] {
            let mut response = client.download(MIB).await.expect("a warm-up download");
            while let Some(chunk) = response.next().await {
                chunk.expect("a warm-up chunk");
            }
        }
        let sent = self
            .client
            .upload(generated(MIB))
            .await
            .expect("a warm-up upload");
        assert_eq!(sent, MIB.to_string());
        let file = FilePart::open(&self.small_file)
            .await
            .expect("the small file");
        let sent = self
            .client
            .multipart(file)
            .await
            .expect("a warm-up multipart upload");
        assert_eq!(sent, MIB.to_string());
    }

    /// Bytes waiting in the kernel on the server's connections: unsent or unacknowledged on the
    /// server's side, received and unread on the client's.
    fn queued_in_sockets(&self) -> u64 {
        let table = std::fs::read_to_string("/proc/self/net/tcp").unwrap_or_default();
        let mut queued = 0;
        for line in table.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(remote), Some(queues)) =
                (fields.get(1), fields.get(2), fields.get(4))
            else {
                continue;
            };
            let port = |address: &str| {
                address
                    .rsplit(':')
                    .next()
                    .and_then(|hex| u16::from_str_radix(hex, 16).ok())
            };
            let Some((tx, rx)) = queues.split_once(':') else {
                continue;
            };
            let hex = |text: &str| u64::from_str_radix(text, 16).unwrap_or(0);
            if port(local) == Some(self.port) {
                queued += hex(tx);
            } else if port(remote) == Some(self.port) {
                queued += hex(rx);
            }
        }
        queued
    }

    /// Waits until the server's streams are no longer pulled (unchanged for 100 ms; at most 5 s)
    /// and returns what they handed over.
    async fn settled_production(&self) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut last = self.produced.load(Ordering::SeqCst);
        let mut steady = 0;
        while steady < 5 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let now = self.produced.load(Ordering::SeqCst);
            steady = if now == last { steady + 1 } else { 0 };
            last = now;
        }
        last
    }
}

/// Downloads `SIZE` bytes through `client`, pausing after [`PAUSE_AT`] to bound what was read
/// ahead of the reader.
async fn download(fixture: &Fixture, client: &FilesClient) -> Result<String, String> {
    fixture.produced.store(0, Ordering::SeqCst);
    let mut response = client.download(SIZE).await.map_err(|e| e.to_string())?;
    let mut read = 0u64;
    let mut ahead = None;
    while let Some(chunk) = response.next().await {
        read += chunk.map_err(|e| format!("after {read} bytes: {e}"))?.len() as u64;
        if ahead.is_none() && read >= PAUSE_AT {
            let produced = fixture.settled_production().await;
            let in_sockets = fixture.queued_in_sockets();
            let pulled = produced.saturating_sub(read).saturating_sub(in_sockets);
            if pulled >= READ_AHEAD_BOUND {
                return Err(format!(
                    "with the reader paused at {read} bytes the server had streamed {produced}: \
                     {pulled} bytes pulled ahead of the reader beyond the {in_sockets} in the \
                     sockets (bound {READ_AHEAD_BOUND})"
                ));
            }
            ahead = Some((pulled, in_sockets));
        }
    }
    if read != SIZE {
        return Err(format!("{read} bytes downloaded of {SIZE}"));
    }
    let (pulled, in_sockets) = ahead.unwrap_or_default();
    Ok(format!(
        "reader paused at {} MiB: {:.1} MiB in the sockets, {:.2} MiB pulled ahead of it besides (bound {} MiB)",
        PAUSE_AT / MIB,
        in_sockets as f64 / MIB as f64,
        pulled as f64 / MIB as f64,
        READ_AHEAD_BOUND / MIB
    ))
}

/// Downloads `SIZE` bytes through the layered client, as [`download`] does, and checks that the
/// response went through the layer.
async fn layered_download(fixture: &Fixture) -> Result<String, String> {
    let seen_before = fixture.seen_by_layer.load(Ordering::SeqCst);
    let outcome = download(fixture, &fixture.layered).await?;
    match fixture.seen_by_layer.load(Ordering::SeqCst) - seen_before {
        1 => Ok(format!("{outcome}; the layer saw the response")),
        seen => Err(format!("the layer saw {seen} responses, not 1")),
    }
}

/// Uploads `SIZE` generated bytes as a `BodyStream`.
async fn upload(fixture: &Fixture) -> Result<String, String> {
    let read = fixture
        .client
        .upload(generated(SIZE))
        .await
        .map_err(|e| e.to_string())?;
    match read == SIZE.to_string() {
        true => Ok(format!("the server read {read} bytes")),
        false => Err(format!("the server read {read} bytes of {SIZE}")),
    }
}

/// Uploads the `SIZE`-byte file as a multipart `FilePart`.
async fn multipart(fixture: &Fixture) -> Result<String, String> {
    let file = FilePart::open(&fixture.file)
        .await
        .map_err(|e| e.to_string())?;
    let read = fixture
        .client
        .multipart(file)
        .await
        .map_err(|e| e.to_string())?;
    match read == SIZE.to_string() {
        true => Ok(format!("the server read {read} bytes of the part")),
        false => Err(format!(
            "the server read {read} bytes of the part, of {SIZE}"
        )),
    }
}

/// A stream of `size` bytes, every chunk the same shared buffer: generating it allocates
/// nothing per chunk.
fn generated(size: u64) -> BodyStream {
    let chunk = Bytes::from(vec![b'x'; CHUNK]);
    let chunks = size.div_ceil(CHUNK as u64);
    let last = size - (chunks - 1) * CHUNK as u64;
    let body = stream::iter(0..chunks).map(move |n| {
        let length = if n + 1 == chunks {
            last as usize
        } else {
            CHUNK
        };
        Ok::<_, std::io::Error>(chunk.slice(..length))
    });
    BodyStream::sized(body, size)
}

/// `GET /download/{size}`: `size` bytes in shared chunks, counted as hyper pulls them.
async fn serve_download(
    State(produced): State<Arc<AtomicU64>>,
    axum::extract::Path(size): axum::extract::Path<u64>,
) -> Body {
    let chunk = Bytes::from(vec![b'y'; CHUNK]);
    let chunks = stream::unfold(0u64, move |sent| {
        let (chunk, produced) = (chunk.clone(), produced.clone());
        async move {
            let length = (size - sent).min(CHUNK as u64);
            if length == 0 {
                return None;
            }
            produced.fetch_add(length, Ordering::SeqCst);
            Some((
                Ok::<_, std::io::Error>(chunk.slice(..length as usize)),
                sent + length,
            ))
        }
    });
    Body::from_stream(chunks)
}

/// `PUT /upload`: reads the body as it comes and answers its length.
async fn count_upload(body: Body) -> String {
    let mut stream = body.into_data_stream();
    let mut read = 0u64;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => read += chunk.len() as u64,
            Err(error) => return format!("the body failed after {read} bytes: {error}"),
        }
    }
    read.to_string()
}

/// `POST /multipart`: reads every part as it comes and answers their total length.
async fn count_parts(mut multipart: Multipart) -> String {
    let mut read = 0u64;
    loop {
        match multipart.next_field().await {
            Ok(Some(mut field)) => loop {
                match field.chunk().await {
                    Ok(Some(chunk)) => read += chunk.len() as u64,
                    Ok(None) => break,
                    Err(error) => return format!("a part failed after {read} bytes: {error}"),
                }
            },
            Ok(None) => return read.to_string(),
            Err(error) => return format!("the body failed after {read} bytes: {error}"),
        }
    }
}

/// Writes `5` to `/proc/self/clear_refs`: the peak resident memory (`VmHWM`) is reset to the
/// current (Linux 4.0 on).
fn reset_peak() -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/clear_refs")?
        .write_all(b"5")
}

/// A field of `/proc/self/status` in bytes (`VmRSS:`, `VmHWM:`).
fn read_status(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|line| line.strip_prefix(field))?;
    let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}
