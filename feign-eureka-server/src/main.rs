//! `feign-eureka`: run the embedded Eureka-compatible registry, or list what one holds.
//!
//! ```text
//! feign-eureka serve --port 8761 [--bind 127.0.0.1] [--peer URL]... [--dev]
//! feign-eureka apps --server https://127.0.0.1:8761/eureka/ [--ca PEM] [--cert PEM --key PEM] [--user NAME]
//! ```

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use feign_eureka::model::Applications;
use feign_eureka_server::{EurekaServer, ServerError};

/// A Eureka-compatible service registry with a dashboard, and a client to inspect one.
#[derive(Debug, Parser)]
#[command(name = "feign-eureka", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a registry (REST API under /eureka/ and /eureka/v2/, dashboard at /).
    Serve(Box<Serve>),
    /// List the applications and instances a registry holds.
    Apps(Apps),
}

#[derive(Debug, Args)]
struct Serve {
    /// Port to listen on.
    #[arg(long, default_value_t = 8761)]
    port: u16,
    /// Address to bind; the default keeps the registry private to this machine.
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// A peer registry's service URL (repeatable), e.g. http://10.0.0.2:8761/eureka/.
    #[arg(long = "peer", value_name = "URL")]
    peers: Vec<String>,
    /// Never stop eviction because of missing renewals (recommended for development).
    #[arg(long)]
    no_self_preservation: bool,
    /// Serve reads straight from the read-write cache so changes show at once.
    #[arg(long)]
    no_read_only_cache: bool,
    /// Seconds between eviction runs.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    eviction_interval: u64,
    /// Local development (not for production): no read-only cache, no self-preservation,
    /// eviction every second and a 1 s shutdown grace.
    #[arg(long)]
    dev: bool,
    /// Seconds a client may take to send a request's header.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    header_read_timeout: u64,
    /// Seconds a client may take to send a request's body, from the end of its header.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    body_read_timeout: u64,
    /// Seconds a connection may stay open without a request.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    idle_timeout: u64,
    /// The most connections open at once; beyond, the longest-idle one is closed.
    #[arg(long, default_value_t = 8192, value_name = "N")]
    max_connections: usize,
    /// The most bytes one instance may take in a registry document (413 beyond).
    #[arg(long, default_value_t = 64 * 1024, value_name = "BYTES")]
    max_instance_bytes: usize,
    /// The most bytes the instances may take together in a registry document (413 beyond);
    /// the default keeps the registry within feign-eureka clients' 32 MiB.
    #[arg(long, default_value_t = 30 * 1024 * 1024, value_name = "BYTES")]
    max_registry_bytes: usize,
    /// The most instances the registry holds (413 beyond).
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    max_instances: usize,
    /// The most push-discovery watches (GET /eureka/watch) waiting at once, at most half the
    /// connections; 0 turns the watch off.
    #[arg(long, default_value_t = 1024, value_name = "N")]
    max_watchers: usize,
    /// Serve HTTPS with this PEM certificate (the server's, then its chain); needs --tls-key.
    #[arg(long, value_name = "PATH", requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert (PKCS#8, PKCS#1 or SEC1, not encrypted).
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// Require mutual TLS: clients must show a certificate signed by a CA in this PEM file.
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    tls_client_ca: Option<std::path::PathBuf>,
    /// Require HTTP basic auth with this user name (and the password) on every request.
    #[arg(long, value_name = "NAME", requires = "password")]
    user: Option<String>,
    /// The password for --user; better given through the environment than the command line.
    #[arg(
        long,
        env = "FEIGN_EUREKA_PASSWORD",
        hide_env_values = true,
        value_name = "PASSWORD"
    )]
    password: Option<Password>,
    /// Peers are known by these credentials from any address (with --peer-password); peers
    /// send them from the user info of this server's URL in their --peer list.
    #[arg(long, value_name = "NAME", requires = "peer_password")]
    peer_user: Option<String>,
    /// The password for --peer-user; better given through the environment.
    #[arg(
        long,
        env = "FEIGN_EUREKA_PEER_PASSWORD",
        hide_env_values = true,
        value_name = "PASSWORD"
    )]
    peer_password: Option<Password>,
    /// Take replication from any address, as Netflix's server does (default: only from peers).
    #[arg(long)]
    replication_from_any_address: bool,
    /// Check https peers' certificates against the CAs in this PEM file (instead of the
    /// built-in public roots).
    #[arg(long, value_name = "PATH")]
    peer_ca: Option<std::path::PathBuf>,
    /// Show this PEM certificate to https peers that require one; needs --peer-key.
    #[arg(long, value_name = "PATH", requires = "peer_key")]
    peer_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --peer-cert.
    #[arg(long, value_name = "PATH", requires = "peer_cert")]
    peer_key: Option<std::path::PathBuf>,
}

/// A password from the command line or the environment, never shown by `Debug`.
#[derive(Clone)]
struct Password(String);

impl std::str::FromStr for Password {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Password(text.to_owned()))
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

#[derive(Debug, Args)]
struct Apps {
    /// The registry's service URL.
    #[arg(
        long,
        default_value = "http://127.0.0.1:8761/eureka/",
        value_name = "URL"
    )]
    server: String,
    /// The largest registry read, after decompression: feign-eureka clients' default.
    #[arg(long, default_value_t = 32 * 1024 * 1024, value_name = "BYTES")]
    max_registry_bytes: usize,
    #[command(flatten)]
    tls: ClientTls,
    /// Send HTTP basic auth with this user name (and --password); credentials in the URL work
    /// too.
    #[arg(long, value_name = "NAME", requires = "password")]
    user: Option<String>,
    /// The password for --user; better given through the environment than the command line.
    #[arg(
        long,
        env = "FEIGN_EUREKA_PASSWORD",
        hide_env_values = true,
        value_name = "PASSWORD"
    )]
    password: Option<Password>,
}

/// TLS settings of `apps` for a registry behind HTTPS.
#[derive(Debug, Args)]
struct ClientTls {
    /// Check the registry's certificate against the CAs in this PEM file (instead of the
    /// built-in public roots).
    #[arg(long, value_name = "PATH")]
    ca: Option<std::path::PathBuf>,
    /// Show this PEM certificate to a registry that requires one (mutual TLS); needs --key.
    #[arg(long, value_name = "PATH", requires = "key")]
    cert: Option<std::path::PathBuf>,
    /// The PEM private key of --cert (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "PATH", requires = "cert")]
    key: Option<std::path::PathBuf>,
}

impl ClientTls {
    /// The TLS settings these files give, `None` when none was given; the files are read when
    /// the client is built.
    fn tls(&self) -> Option<feign_core::transport::Tls> {
        if self.ca.is_none() && self.cert.is_none() {
            return None;
        }
        let mut tls = feign_core::transport::Tls::new();
        if let Some(ca) = &self.ca {
            tls = tls.ca_file(ca);
        }
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            tls = tls.identity_files(cert, key);
        }
        Some(tls)
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(serve) => run_server(*serve).await,
        Command::Apps(apps) => list_apps(apps).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", error_chain(&error));
            ExitCode::FAILURE
        }
    }
}

/// Why a subcommand failed; `main` prints it with its sources.
#[derive(Debug, thiserror::Error)]
enum CliError {
    /// The registry did not start.
    #[error(transparent)]
    Start(#[from] ServerError),
    /// A certificate or key file cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// Ctrl-C cannot be waited for.
    #[error("cannot wait for ctrl-c")]
    Signal(#[source] std::io::Error),
    /// The HTTP client of `apps` cannot be built, or reading the answer failed.
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    /// A TLS file of `apps` cannot be read or used.
    #[error(transparent)]
    Tls(#[from] feign_core::Error),
    /// The user name or password cannot be sent in a header.
    #[error("the user name or password cannot be sent in a header (control characters)")]
    Credentials,
    /// The registry did not answer.
    #[error("cannot reach {url}")]
    Unreachable {
        /// The service URL.
        url: String,
        /// Why, without the URL again.
        #[source]
        source: reqwest::Error,
    },
    /// The registry answered with an error status.
    #[error("{url}apps/ answered {status}")]
    Status {
        /// The service URL.
        url: String,
        /// The status.
        status: reqwest::StatusCode,
    },
    /// The registry answered something that is not a registry.
    #[error("unreadable registry")]
    Unreadable(#[source] serde_json::Error),
    /// The registry's answer is larger than the cap.
    #[error("the registry answered more than {limit} bytes (--max-registry-bytes)")]
    TooLarge {
        /// The cap.
        limit: usize,
    },
}

async fn run_server(args: Serve) -> Result<(), CliError> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        // Colour codes only for a person at a terminal, not in a piped or redirected log.
        .with_ansi(std::io::stdout().is_terminal())
        .init();
    let bind = if args.bind.contains(':') && !args.bind.starts_with('[') {
        format!("[{}]:{}", args.bind, args.port)
    } else {
        format!("{}:{}", args.bind, args.port)
    };
    let mut builder = EurekaServer::builder()
        .bind(bind)
        .peers(args.peers)
        .self_preservation(!args.no_self_preservation)
        .read_only_cache(!args.no_read_only_cache)
        .eviction_interval(Duration::from_secs(args.eviction_interval.max(1)))
        .header_read_timeout(Duration::from_secs(args.header_read_timeout.max(1)))
        .body_read_timeout(Duration::from_secs(args.body_read_timeout.max(1)))
        .idle_timeout(Duration::from_secs(args.idle_timeout.max(1)))
        .max_connections(args.max_connections.max(1))
        .max_watchers(args.max_watchers)
        .max_instance_bytes(args.max_instance_bytes.max(1))
        .max_registry_bytes(args.max_registry_bytes.max(1))
        .max_instances(args.max_instances.max(1));
    if args.dev {
        builder = builder.development();
    }
    if let (Some(user), Some(Password(password))) = (args.user, args.password) {
        builder = builder.credentials(user, password);
    }
    if let (Some(user), Some(Password(password))) = (args.peer_user, args.peer_password) {
        builder = builder.peer_credentials(user, password);
    }
    builder = builder.replication_from_any_address(args.replication_from_any_address);
    let peer_tls = ClientTls {
        ca: args.peer_ca,
        cert: args.peer_cert,
        key: args.peer_key,
    };
    if let Some(tls) = peer_tls.tls() {
        builder = builder.peer_tls(tls);
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        let read = |path: &std::path::Path| {
            std::fs::read(path).map_err(|source| CliError::Read {
                path: path.to_owned(),
                source,
            })
        };
        builder = builder.tls_pem(read(cert)?, read(key)?);
        if let Some(ca) = &args.tls_client_ca {
            builder = builder.tls_client_ca_pem(read(ca)?);
        }
    }
    let server = builder.start().await?;
    println!("eureka registry: {}", server.url());
    println!("dashboard:       {}", server.dashboard_url());
    if args.dev {
        println!("development:     no read-only cache, no self-preservation, eviction every 1 s");
    }
    tokio::signal::ctrl_c().await.map_err(CliError::Signal)?;
    println!("shutting down");
    server.shutdown().await;
    Ok(())
}

fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

async fn list_apps(args: Apps) -> Result<(), CliError> {
    // Credentials in the URL or given as flags are sent as basic auth and never printed.
    let (url, mut authorization) = feign_core::redact::split_basic_auth(&args.server);
    if let (Some(user), Some(Password(password))) = (args.user, args.password) {
        let credentials = feign_core::redact::Credentials::new(user, password);
        authorization = Some(
            credentials
                .basic_authorization()
                .ok_or(CliError::Credentials)?,
        );
    }
    let mut url = url.into_owned();
    if !url.ends_with('/') {
        url.push('/');
    }
    let mut builder = feign_core::client::reqwest_builder(
        Duration::from_secs(10),
        None,
        Some(Duration::from_secs(10)),
    );
    if let Some(tls) = args.tls.tls() {
        builder = feign_core::transport::HttpClientConfig::new()
            .tls(tls)
            .apply(builder)?;
    }
    let client = builder.build()?;
    let mut request = client.get(format!("{url}apps/"));
    if let Some(authorization) = authorization {
        request = request.header(reqwest::header::AUTHORIZATION, authorization);
    }
    let response = request
        .header("Accept", "application/json")
        .send()
        .await
        .map_err(|e| CliError::Unreachable {
            url: url.clone(),
            source: e.without_url(),
        })?;
    let status = response.status();
    if !status.is_success() {
        return Err(CliError::Status { url, status });
    }
    let body = read_within(response, args.max_registry_bytes).await?;
    let apps = Applications::from_json(&body).map_err(CliError::Unreadable)?;
    print!("{}", table(&apps));
    Ok(())
}

/// The body of `response`, decompressed, refused as soon as it passes `limit` bytes: an
/// endless answer or a gzip bomb costs at most the cap.
async fn read_within(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, CliError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(reqwest::Error::without_url)?
    {
        if body.len() + chunk.len() > limit {
            return Err(CliError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `text` with every control character, format character (`\u{202e}` reverses the text after
/// it, `\u{200b}` hides) and line or paragraph separator escaped (`\u{1b}`), so what a registry
/// holds cannot move the cursor, clear the screen, retitle the terminal it is printed to or
/// show `host\u{202e}gnp.exe` as `hostexe.png`.
fn printable(text: &str) -> String {
    use unicode_general_category::{get_general_category, GeneralCategory};
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let hidden = matches!(
            get_general_category(c),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        );
        if hidden {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

fn table(apps: &Applications) -> String {
    let mut rows = vec![[
        "APPLICATION".to_owned(),
        "INSTANCE".to_owned(),
        "STATUS".to_owned(),
        "ADDRESS".to_owned(),
        "ZONE".to_owned(),
    ]];
    for app in &apps.applications {
        for instance in &app.instances {
            rows.push([
                printable(&app.name),
                printable(instance.id()),
                instance.status.to_string(),
                printable(&format!("{}:{}", instance.host_name, instance.port.port)),
                instance
                    .metadata
                    .get("zone")
                    .map_or_else(|| "-".to_owned(), |zone| printable(zone)),
            ]);
        }
    }
    let mut widths = [0usize; 5];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "{} application(s), {} instance(s), apps__hashcode {:?}\n",
        apps.applications.len(),
        apps.instance_count(),
        apps.apps_hashcode
    ));
    out
}
