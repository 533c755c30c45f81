//! The example's steps, in the order it prints them.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use feign_core::multipart::FilePart;
use feign_core::transport::Tls;
use feign_core::{feign_client, Error, FileBody, ResponseEntity, StreamingResponse};
use feign_eureka::EurekaClient;
use feign_eureka_server::EurekaServer;
use feign_lb::LoadBalancer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::data::{generate, peak_rss, Sha256, TempDir};
use crate::pki::Pki;
use crate::service::{FileInfo, Instance};
use quickstart::{expect, wait_for, StepResult, REFRESH};

const MIB: u64 = 1 << 20;

/// The peak resident memory the process must stay under, whatever the file's size.
const MAX_PEAK_RSS: u64 = 64 * MIB;

/// The file service as callers see it. No URL: `files` is resolved through Eureka, and each
/// call goes to the next instance over HTTPS.
#[feign_client("files")]
pub trait Files {
    /// Stores `file` under `name`, streamed from disk with its `Content-Length`.
    #[put("/files/{name}")]
    async fn put(
        &self,
        #[path] name: &str,
        #[body] file: FileBody,
    ) -> Result<ResponseEntity<FileInfo>, Error>;

    /// Stores `file` under its file name, as a browser's upload form sends it.
    #[post("/files")]
    #[multipart]
    async fn upload(
        &self,
        #[part] description: &str,
        #[part("file")] file: FilePart,
    ) -> Result<FileInfo, Error>;

    /// The file's content, returned as soon as the head arrives, never buffered.
    #[get("/files/{name}")]
    async fn download(&self, #[path] name: &str) -> Result<StreamingResponse, Error>;

    /// What the service knows of the file, with the answer's status and headers.
    #[get("/files/{name}/info")]
    async fn info(&self, #[path] name: &str) -> Result<ResponseEntity<FileInfo>, Error>;
}

/// How to run the example.
#[derive(Debug, Clone)]
pub struct Options {
    /// The size of the file moved, in bytes. Default 256 MiB.
    pub size: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options { size: 256 * MIB }
    }
}

impl Options {
    /// Reads `--size-mib N` from `args`, else `FILES_SIZE_MIB`, else the default.
    pub fn from_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut size = std::env::var("FILES_SIZE_MIB").ok();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--size-mib" => size = Some(args.next().ok_or("--size-mib needs a number")?),
                other => return Err(format!("unknown argument `{other}` (try --size-mib 64)")),
            }
        }
        match size {
            None => Ok(Options::default()),
            Some(mib) => match mib.trim().parse::<u64>() {
                Ok(mib @ 1..=8192) => Ok(Options { size: mib * MIB }),
                _ => Err(format!("the size must be 1 to 8192 MiB, not `{mib}`")),
            },
        }
    }
}

/// What the steps observed, for the test that runs them.
#[derive(Debug, Default)]
pub struct Report {
    /// The instances that answered the calls, in order.
    pub served_by: Vec<String>,
    /// Bytes the download received.
    pub downloaded: u64,
    /// The process's peak resident memory in bytes, where the system reports it.
    pub peak_rss: Option<u64>,
}

/// Runs every step, printing a few lines each; fails on the first check that does not hold.
pub async fn run(options: Options) -> StepResult<Report> {
    let started = Instant::now();
    let mut report = Report::default();
    let dir = TempDir::new()?;
    let pki = Pki::new()?;
    println!(
        "ca           made in memory; every server and the client show a certificate it signed"
    );

    let registry = EurekaServer::builder()
        .bind("127.0.0.1:0")
        .tls_pem(pki.server.cert.as_bytes(), pki.server.key.as_bytes())
        .tls_client_ca_pem(pki.ca.as_bytes())
        .read_only_cache(false)
        .self_preservation(false)
        .start()
        .await?;
    let eureka_url = registry.url().to_owned();
    println!("registry     {eureka_url} (embedded, mutual TLS)");

    let store = dir.path().join("store");
    let mut instances = Vec::new();
    for _ in 0..3 {
        let instance = Instance::start(&eureka_url, &pki, &store).await?;
        println!("instance     https://{} registered", instance.id);
        instances.push(instance);
    }

    let discovery = EurekaClient::builder()
        .service_urls([eureka_url.as_str()])
        .tls(pki.client_tls())
        .registry_fetch_interval(REFRESH)
        .start()
        .await?;
    // Round robin (the default) over the instances Eureka reports.
    let balancer = LoadBalancer::builder()
        .supplier(discovery.supplier())
        .build();
    let found = || discovery.instances("files").map_or(0, |found| found.len());
    wait_for(|| found() == 3, "3 instances discovered").await?;
    let files = FilesClient::builder()
        .load_balancer(balancer.clone())
        .tls(pki.client_tls())
        .build()?;

    let size = options.size;
    let original = dir.path().join("original.bin");
    let began = Instant::now();
    let sha256 = generate(&original, size).await?;
    println!(
        "file         {} MiB generated in {:.1} s, sha256 {}…",
        size / MIB,
        began.elapsed().as_secs_f64(),
        &sha256[..16]
    );

    println!("\n1. uploaded as a streamed body (PUT, FileBody: Content-Length from the file)");
    let began = Instant::now();
    let put = files
        .put("big.bin", FileBody::open(&original).await?)
        .await?;
    let elapsed = began.elapsed();
    let stored = put.body();
    println!(
        "   {} from {} in {}; the instance's sha256 matches",
        put.status(),
        stored.stored_by,
        rate(size, elapsed)
    );
    expect(
        put.status() == 201,
        format!("201 Created, got {}", put.status()),
    )?;
    expect_same(stored, size, &sha256)?;
    report.served_by.push(stored.stored_by.clone());

    println!(
        "\n2. uploaded as multipart/form-data (a text part, and a FilePart streamed from disk)"
    );
    let began = Instant::now();
    let part = FilePart::open(&original).await?.file_name("form.bin");
    let stored = files.upload("the same bytes, from a form", part).await?;
    println!(
        "   stored as {:?} by {} in {}: {:?}",
        stored.name,
        stored.stored_by,
        rate(size, began.elapsed()),
        stored.description.as_deref().unwrap_or_default()
    );
    expect(stored.name == "form.bin", "the file part's file name")?;
    expect(
        stored.description.as_deref() == Some("the same bytes, from a form"),
        "the text part to arrive",
    )?;
    expect_same(&stored, size, &sha256)?;
    report.served_by.push(stored.stored_by.clone());

    println!("\n3. its metadata with the answer's status and headers (ResponseEntity<FileInfo>)");
    let info = files.info("big.bin").await?;
    let served_by = header(info.headers(), "x-served-by");
    let etag = header(info.headers(), "etag");
    println!(
        "   {} from {served_by}: {} bytes, ETag {}…\" (the sha256)",
        info.status(),
        info.body().size,
        &etag[..etag.len().min(17)]
    );
    expect(
        etag == format!("\"{sha256}\""),
        "the ETag to be the file's sha256",
    )?;
    expect_same(info.body(), size, &sha256)?;
    report.served_by.push(served_by);

    println!("\n4. downloaded as a stream to disk (StreamingResponse::into_async_read)");
    let copy = dir.path().join("downloaded.bin");
    let began = Instant::now();
    let download = files.download("big.bin").await?;
    let served_by = header(download.headers(), "x-served-by");
    expect(
        download.content_length() == Some(size),
        format!("Content-Length {size}, got {:?}", download.content_length()),
    )?;
    let (received, received_sha256) = save(download, &copy).await?;
    let elapsed = began.elapsed();
    let on_disk = tokio::fs::metadata(&copy).await?.len();
    println!(
        "   {} MiB from {served_by} in {}; size on disk and sha256 match",
        received / MIB,
        rate(received, elapsed)
    );
    expect(
        received == size && on_disk == size,
        format!("{size} bytes, got {received} ({on_disk} on disk)"),
    )?;
    expect(
        received_sha256 == sha256,
        format!("sha256 {sha256}, got {received_sha256}"),
    )?;
    report.downloaded = received;
    report.served_by.push(served_by);

    let spread: BTreeSet<_> = report.served_by.iter().collect();
    // Round robin over the list Eureka reports, which it may reorder between fetches: the
    // spread is shown, not required.
    println!(
        "\n5. the 4 calls went to {} of the 3 instances: {spread:?}",
        spread.len()
    );

    println!("\n6. a client without the client certificate is refused by the TLS handshake");
    let anonymous = FilesClient::builder()
        .load_balancer(balancer.clone())
        .tls(Tls::new().ca_pem(pki.ca.as_bytes()))
        .build()?;
    match anonymous.info("big.bin").await {
        Err(err) if err.status().is_none() => println!("   {}", causes(&err)),
        Err(err) => return Err(format!("expected no HTTP answer, got {err}").into()),
        Ok(info) => return Err(format!("expected a refusal, got {}", info.status()).into()),
    }

    report.peak_rss = peak_rss();
    match report.peak_rss {
        Some(peak) => {
            println!(
                "\npeak RSS     {} MiB for the whole process (client, registry and instances), \
                 having moved {} MiB three times",
                peak / MIB,
                size / MIB
            );
            expect(
                peak < MAX_PEAK_RSS,
                format!(
                    "a peak RSS under {} MiB: streams are never held whole",
                    MAX_PEAK_RSS / MIB
                ),
            )?;
        }
        None => println!("\npeak RSS     not reported by this system"),
    }

    for instance in instances {
        instance.stop().await?;
    }
    discovery.shutdown().await;
    registry.shutdown().await;
    drop(dir);
    println!("\ndone in {:.1} s", started.elapsed().as_secs_f64());
    Ok(report)
}

/// Writes the response's body to `path` as it arrives; returns its length and SHA-256.
async fn save(download: StreamingResponse, path: &Path) -> StepResult<(u64, String)> {
    let mut body = download.into_async_read();
    let mut file = tokio::io::BufWriter::new(tokio::fs::File::create(path).await?);
    let (mut buffer, mut length, mut sha256) = (vec![0; 64 << 10], 0u64, Sha256::new());
    loop {
        let read = body.read(&mut buffer).await?;
        if read == 0 {
            break;
        }
        sha256.update(&buffer[..read]);
        file.write_all(&buffer[..read]).await?;
        length += read as u64;
    }
    file.flush().await?;
    Ok((length, sha256.finish()))
}

/// `err` and each of its causes, joined by `: `.
fn causes(err: &Error) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Fails unless the service stored `size` bytes with the digest `sha256`.
fn expect_same(info: &FileInfo, size: u64, sha256: &str) -> StepResult<()> {
    expect(
        info.size == size && info.sha256 == sha256,
        format!(
            "{size} bytes with sha256 {sha256}, the service stored {} with {}",
            info.size, info.sha256
        ),
    )
}

fn header(headers: &feign_core::http::HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("?")
        .to_owned()
}

/// `1.2 s (213 MiB/s)`.
fn rate(bytes: u64, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(1e-6);
    format!(
        "{secs:.1} s ({:.0} MiB/s)",
        bytes as f64 / MIB as f64 / secs
    )
}
