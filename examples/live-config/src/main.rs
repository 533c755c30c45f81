//! Run with `cargo run -p live-config`.
//!
//! A client configured from an `application.yml` the example writes to a temporary directory,
//! with `refresh-enabled: true`, while callers keep calling it. The example edits the file as an
//! operator would: the read timeout drops from 5 s to 100 ms and a default header changes, then
//! a value that does not bind (kept out, logged with its key and file), then the first settings
//! again. Each step checks what the next calls see; no call of the background callers may fail.
//! Stops by itself in a few seconds; exits non-zero when a step does not behave as it prints.

use std::error::Error as StdError;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use axum::routing::get;
use axum::Router;
use feign_core::config::LiveConfig;
use feign_core::{feign_client, Error};
use tokio::net::TcpListener;

type BoxError = Box<dyn StdError + Send + Sync>;

/// How long the server takes to answer `/slow`: between the two read timeouts the file sets.
const SLOW: Duration = Duration::from_millis(400);

/// The service the example calls.
#[feign_client("stock-service")]
pub trait StockService {
    /// Answers at once with the `X-Stage` header it received.
    #[get("/fast")]
    async fn fast(&self) -> Result<String, Error>;

    /// Answers after [`SLOW`].
    #[get("/slow")]
    async fn slow(&self) -> Result<String, Error>;
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let dir = std::env::temp_dir().join(format!("feign-live-config-{}", std::process::id()));
    let outcome = run(&dir).await;
    let _ = std::fs::remove_dir_all(&dir);
    match outcome {
        Ok(()) => {
            println!("done");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("live-config example failed: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(dir: &Path) -> Result<(), BoxError> {
    let url = serve().await?;
    std::fs::create_dir_all(dir)?;
    let file = dir.join("application.yml");
    write_settings(&file, &url, "5s", "blue")?;

    let live = LiveConfig::from_files([&file])?;
    let _watch = live.watch(Duration::from_millis(50))?;
    let stock = Arc::new(StockServiceClient::builder().live_config(&live).build()?);
    let callers = Callers::start(&stock);

    check(
        "a 400 ms call fits the 5 s read timeout",
        stock.slow().await.is_ok(),
    )?;
    check(
        "the default header is `blue`",
        stock.fast().await? == "blue",
    )?;

    println!("editing application.yml: read-timeout 100ms, X-Stage green");
    write_settings(&file, &url, "100ms", "green")?;
    applied(&live).await?;
    let slow = stock.slow().await;
    check(
        "the next 400 ms call times out at 100 ms",
        slow.as_ref().is_err_and(Error::is_timeout),
    )?;
    check(
        "the default header is `green`",
        stock.fast().await? == "green",
    )?;

    println!("editing application.yml: read-timeout `soon` (not a duration)");
    write_settings(&file, &url, "soon", "red")?;
    applied(&live).await?;
    check(
        "the bad value is kept out: still 100 ms and `green`",
        stock.slow().await.is_err() && stock.fast().await? == "green",
    )?;

    println!("editing application.yml: read-timeout 5s, X-Stage blue");
    write_settings(&file, &url, "5s", "blue")?;
    applied(&live).await?;
    check("the 400 ms call fits again", stock.slow().await.is_ok())?;

    let (calls, failures) = callers.stop().await;
    check(
        &format!("{calls} calls by the background callers, {failures} failed"),
        calls > 0 && failures == 0,
    )
}

/// Writes the client's settings as an operator would edit them.
fn write_settings(file: &Path, url: &str, read_timeout: &str, stage: &str) -> std::io::Result<()> {
    let yaml = format!(
        "spring:\n  cloud:\n    openfeign:\n      client:\n        refresh-enabled: true\n        \
         config:\n          stock-service:\n            url: {url}\n            \
         read-timeout: {read_timeout}\n            default-request-headers:\n              \
         X-Stage: [{stage}]\n"
    );
    let staged: PathBuf = file.with_extension("yml.tmp");
    std::fs::write(&staged, yaml)?;
    // Replaced whole, as editors save: the watcher never reads half a file.
    std::fs::rename(staged, file)
}

/// Waits until the watcher has applied the file's latest change.
async fn applied(live: &LiveConfig) -> Result<(), BoxError> {
    let version = live.version();
    tokio::time::timeout(Duration::from_secs(10), live.changed_after(version))
        .await
        .map_err(|_| "the change to application.yml was not seen within 10 s")?;
    Ok(())
}

fn check(what: &str, held: bool) -> Result<(), BoxError> {
    if held {
        println!("ok: {what}");
        Ok(())
    } else {
        Err(format!("not so: {what}").into())
    }
}

/// Callers calling `/fast` in a loop the whole time the file changes.
struct Callers {
    stop: Arc<AtomicBool>,
    calls: Arc<AtomicU64>,
    failures: Arc<AtomicU64>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Callers {
    fn start(stock: &Arc<StockServiceClient>) -> Callers {
        let stop = Arc::new(AtomicBool::new(false));
        let calls = Arc::new(AtomicU64::new(0));
        let failures = Arc::new(AtomicU64::new(0));
        let tasks = (0..4)
            .map(|_| {
                let (stock, stop) = (Arc::clone(stock), Arc::clone(&stop));
                let (calls, failures) = (Arc::clone(&calls), Arc::clone(&failures));
                tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        if let Err(err) = stock.fast().await {
                            eprintln!("background call failed: {err}");
                            failures.fetch_add(1, Ordering::Relaxed);
                        }
                        calls.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                })
            })
            .collect();
        Callers {
            stop,
            calls,
            failures,
            tasks,
        }
    }

    async fn stop(self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            let _ = task.await;
        }
        (
            self.calls.load(Ordering::Relaxed),
            self.failures.load(Ordering::Relaxed),
        )
    }
}

/// The stock service on 127.0.0.1; runs until the process ends.
async fn serve() -> std::io::Result<String> {
    let stage = |headers: HeaderMap| async move {
        headers
            .get("x-stage")
            .and_then(|value| value.to_str().ok())
            .unwrap_or("none")
            .to_owned()
    };
    let app = Router::new().route("/fast", get(stage)).route(
        "/slow",
        get(|| async {
            tokio::time::sleep(SLOW).await;
            "slow"
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(url)
}
