//! The two registries under load, each in a process of its own: the embedded one in a child of
//! this bench binary, the Spring one through the interop fixture's launcher.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use feign_eureka_server::EurekaServer;
use feign_tests::interop::JavaApp;

/// Set in the environment of the child that runs the embedded registry.
const CHILD_ENV: &str = "FEIGN_BENCH_REGISTRY_CHILD";

/// Over the fixture's settings: its own host name as the 127.0.0.1 of its service URL, so the
/// server recognises that URL as itself. With the fixture's `localhost` it takes itself for a
/// peer and replicates every registration and renewal to itself over HTTP, which the interop
/// tests do not notice but a load test does.
const SPRING_ARGS: &[&str] = &["--eureka.instance.hostname=127.0.0.1"];

/// Which registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `feign_eureka_server::EurekaServer`.
    Embedded,
    /// Spring Cloud Netflix Eureka server (`tests/interop/eureka-server`).
    Spring,
}

impl Kind {
    /// The name in the output.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Embedded => "embedded (feign-eureka-server)",
            Kind::Spring => "Spring Cloud Netflix Eureka",
        }
    }
}

/// A running registry.
pub(crate) enum Registry {
    /// This binary, re-run as [`serve_if_child`]; it exits when its stdin closes.
    Embedded(Child, String),
    /// The JVM; it exits when its stdin closes too.
    Spring(JavaApp),
}

impl Registry {
    /// Starts one, or says why it cannot.
    pub(crate) fn start(kind: Kind, jvm_options: &[&str]) -> Result<Registry, String> {
        match kind {
            Kind::Embedded => start_embedded(),
            Kind::Spring => JavaApp::eureka_server_with_jvm(jvm_options, SPRING_ARGS)
                .map(Registry::Spring)
                .map_err(|unavailable| unavailable.to_string()),
        }
    }

    /// The service URL, `http://127.0.0.1:PORT/eureka/`.
    pub(crate) fn url(&self) -> String {
        match self {
            Registry::Embedded(_, url) => url.clone(),
            Registry::Spring(app) => app.eureka_url(),
        }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        match self {
            Registry::Embedded(child, _) => child.id(),
            Registry::Spring(app) => app.pid().unwrap_or(0),
        }
    }

    /// Stops it and waits for it.
    pub(crate) fn stop(self) {
        match self {
            Registry::Embedded(mut child, _) => {
                drop(child.stdin.take());
                let deadline = Instant::now() + Duration::from_secs(10);
                while Instant::now() < deadline {
                    if let Ok(Some(_)) = child.try_wait() {
                        return;
                    }
                    thread::sleep(Duration::from_millis(50));
                }
                let _ = child.kill();
                let _ = child.wait();
            }
            Registry::Spring(app) => app.stop(),
        }
    }
}

/// Re-runs this binary as the embedded registry and reads the URL it prints.
fn start_embedded() -> Result<Registry, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let mut child = Command::new(exe)
        .env(CHILD_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the embedded registry: {e}"))?;
    let mut line = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = BufReader::new(stdout).read_line(&mut line);
    }
    match line.trim() {
        url if url.starts_with("http://") => Ok(Registry::Embedded(child, url.to_owned())),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            Err("the embedded registry did not start".to_owned())
        }
    }
}

/// In the child started by [`start_embedded`]: serves the embedded registry, configured as the
/// Spring fixture is (no self-preservation, eviction every second, no read-only response cache)
/// and without the per-client registration limit Spring does not have, prints its URL, and
/// returns `true` once stdin closes. Returns `false` at once in the parent.
pub(crate) fn serve_if_child() -> bool {
    if std::env::var_os(CHILD_ENV).is_none() {
        return false;
    }
    // One worker per core, as the `feign-eureka` binary's runtime.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let server = EurekaServer::builder()
            .bind("127.0.0.1:0")
            .self_preservation(false)
            .read_only_cache(false)
            .eviction_interval(Duration::from_secs(1))
            .registration_rate_limit(None)
            .registration_bytes_limit(None)
            .start()
            .await
            .expect("embedded registry starts");
        println!("{}", server.url());
        let _ = tokio::task::spawn_blocking(|| {
            std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink())
        })
        .await;
        server.shutdown().await;
    });
    true
}
