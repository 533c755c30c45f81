//! Resident memory of a large download through a generated client's `StreamingResponse`.
//!
//! A hyper server in this process makes the body on the fly (one 64 KiB chunk handed out again
//! and again, with a `Content-Length`), so nothing is read from disk and the server holds no
//! copy. The client reads it through `#[feign_client]`'s streaming method, as a `Stream` of
//! chunks or through the `AsyncRead` adapter, checking the byte count and a sum of every byte.
//! A thread samples this process's `VmRSS` every few milliseconds; `VmHWM` is the kernel's
//! peak for the whole process (server, client and runtime together). With both modes, they take
//! turns, the order reversing every other run. Each download prints a row; the summary
//! (`feign_bench::figures::download`) gives each mode's range. Run with
//! `cargo run --release -p feign-bench --bin download -- --gib 1`.

use std::convert::Infallible;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::{Parser, ValueEnum};
use feign_bench::figures::download::{
    resident_before_line, runs_table, summary, Measured, BUFFERED,
};
use feign_bench::load::interleaved;
use feign_bench::memory::resident;
use feign_core::{feign_client, Error, StreamingResponse};
use futures_util::StreamExt;
use http_body_util::StreamBody;
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

/// How the client reads the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// `StreamingResponse` as a `Stream` of `Bytes`.
    Stream,
    /// `StreamingResponse::into_async_read`, read into a 64 KiB buffer.
    Read,
    /// Both, one after the other.
    Both,
    /// For contrast: a method returning `Bytes`, the body buffered whole (the client's cap
    /// raised to fit), to show what the sampler sees when a body is held in memory.
    Buffered,
}

/// Command-line settings.
#[derive(Debug, Parser)]
#[command(about = "Peak resident memory and throughput of a streamed download")]
struct Args {
    /// Size of the download, in GiB.
    #[arg(long, default_value_t = 1)]
    gib: u64,
    /// Downloads per mode; the table shows each.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// How the body is read.
    #[arg(long, value_enum, default_value_t = Mode::Both)]
    mode: Mode,
    /// How often the resident set is sampled, in milliseconds.
    #[arg(long, default_value_t = 5)]
    sample_ms: u64,
}

/// The downloading client; generates `DownloadsClient`.
#[feign_client("downloads")]
trait Downloads {
    /// The whole blob, streamed.
    #[get("/blob")]
    async fn blob(&self) -> Result<StreamingResponse, Error>;

    /// The whole blob, buffered.
    #[get("/blob")]
    async fn whole(&self) -> Result<Bytes, Error>;
}

const CHUNK: usize = 64 * 1024;

/// Serves `GET /blob`: `total` bytes (a multiple of 64 KiB), made as they are sent.
async fn serve(total: u64) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let chunk = Bytes::from((0..CHUNK).map(|i| (i % 251) as u8).collect::<Vec<u8>>());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let chunk = chunk.clone();
            let service = hyper::service::service_fn(move |_: Request<Incoming>| {
                let chunk = chunk.clone();
                let chunks = total / CHUNK as u64;
                let frames = futures_util::stream::iter(0..chunks)
                    .map(move |_| Ok::<_, Infallible>(Frame::data(chunk.clone())));
                let response = Response::builder()
                    .header("content-length", total)
                    .header("content-type", "application/octet-stream")
                    .body(StreamBody::new(frames))
                    .expect("a valid response");
                async move { Ok::<_, Infallible>(response) }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    url
}

/// The highest `VmRSS` seen by a sampling thread, in KiB.
struct Sampler {
    peak_kib: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Sampler {
    fn start(every: Duration) -> Sampler {
        let peak_kib = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (peak, stopped) = (peak_kib.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                if let Some(now) = resident() {
                    peak.fetch_max(now.rss_kb, Ordering::Relaxed);
                }
                std::thread::sleep(every);
            }
        });
        Sampler {
            peak_kib,
            stop,
            thread,
        }
    }

    fn finish(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
        self.peak_kib.load(Ordering::Relaxed)
    }
}

/// What one download read: bytes, and the sum of every byte as a check that each was seen.
async fn download(client: &DownloadsClient, mode: Mode) -> Result<(u64, u64), Error> {
    if mode == Mode::Buffered {
        let body = client.whole().await?;
        return Ok((body.len() as u64, body.iter().map(|&b| u64::from(b)).sum()));
    }
    let response = client.blob().await?;
    let (mut total, mut sum) = (0u64, 0u64);
    match mode {
        Mode::Read => {
            let mut reader = response.into_async_read();
            let mut buffer = vec![0u8; CHUNK];
            loop {
                let read = reader.read(&mut buffer).await.map_err(Error::custom)?;
                if read == 0 {
                    break;
                }
                total += read as u64;
                sum += buffer[..read].iter().map(|&b| u64::from(b)).sum::<u64>();
            }
        }
        Mode::Stream | Mode::Both | Mode::Buffered => {
            let mut stream = response;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk?;
                total += chunk.len() as u64;
                sum += chunk.iter().map(|&b| u64::from(b)).sum::<u64>();
            }
        }
    }
    Ok((total, sum))
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let total = args.gib << 30;
    let expected_sum: u64 =
        (0..CHUNK).map(|i| (i % 251) as u64).sum::<u64>() * (total / CHUNK as u64);
    let url = serve(total).await;
    let client = DownloadsClient::builder()
        .url(url)
        .max_response_bytes(usize::try_from(total).unwrap_or(usize::MAX))
        .build()
        .expect("a valid client");
    let modes: &[Mode] = match args.mode {
        Mode::Both => &[Mode::Stream, Mode::Read],
        Mode::Stream => &[Mode::Stream],
        Mode::Read => &[Mode::Read],
        Mode::Buffered => &[Mode::Buffered],
    };
    let before = resident().map_or(0, |r| r.rss_kb);
    println!(
        "{} GiB per download, {} runs per mode; {}\n",
        args.gib,
        args.runs,
        resident_before_line(mib(before))
    );
    let mut lines = Vec::new();
    let mut failed = false;
    for run in 1..=args.runs {
        for mode in interleaved(modes, run - 1) {
            let sampler = Sampler::start(Duration::from_millis(args.sample_ms));
            let started = Instant::now();
            let result = download(&client, mode).await;
            let elapsed = started.elapsed();
            let peak = sampler.finish();
            let hwm = resident().map_or(0, |r| r.peak_kb);
            let name = match mode {
                Mode::Read => "AsyncRead",
                Mode::Buffered => BUFFERED,
                _ => "Stream",
            };
            match result {
                Ok((bytes, sum)) if bytes == total && sum == expected_sum => {
                    lines.push(Measured {
                        mode: name.to_owned(),
                        run,
                        seconds: elapsed.as_secs_f64(),
                        mib_per_second: bytes as f64 / (1 << 20) as f64 / elapsed.as_secs_f64(),
                        peak_mib: mib(peak),
                        hwm_mib: mib(hwm),
                    });
                }
                Ok((bytes, sum)) => {
                    eprintln!("{name} run {run}: read {bytes} bytes (sum {sum}), expected {total} (sum {expected_sum})");
                    failed = true;
                }
                Err(error) => {
                    eprintln!("{name} run {run}: {error}");
                    failed = true;
                }
            }
        }
    }
    print!("{}", runs_table(&lines));
    let result = summary(&[(lines, Some(mib(before)))]);
    println!("\n{result}");
    // The buffered contrast is expected to miss the goal; it is not a failure of the benchmark.
    let missed = result.goals.iter().any(|goal| !goal.met);
    if failed || (missed && args.mode != Mode::Buffered) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
