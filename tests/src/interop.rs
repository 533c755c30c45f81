//! Launchers for the Java interop fixtures under `tests/interop/`: a real Spring Cloud Netflix
//! Eureka server and a Spring Boot Eureka client app (`java-svc`).
//!
//! Everything here is blocking and uses only `std`, so sync tests and `#[tokio::test]`s can both
//! use it (from async code, call it inside `tokio::task::spawn_blocking` if the runtime must keep
//! running other tasks meanwhile).
//!
//! # Finding the fixtures
//!
//! The jars are built by `tests/interop/build.sh` (Maven, Java 17). They are looked up in
//! `$FEIGN_INTEROP_DIR` (default: the workspace's `tests/interop`) at
//! `eureka-server/target/*.jar` and `java-svc/target/*.jar`.
//!
//! When `java` or a jar is missing, the launchers return [`Unavailable`], which names what is
//! missing. The tests that need the fixtures are `#[ignore]`d with that reason, so a plain
//! `cargo test` counts them as ignored; run with `-- --ignored` (as `.ci/run` does), they
//! fail when the fixtures cannot start, never pass without running.
//!
//! # Logs
//!
//! Each Java process writes stdout and stderr to a file under the cargo target directory
//! (`<target>/<profile>/interop-logs/`); the file's tail is printed when the app fails to become
//! ready, and [`JavaApp::log_path`] names it.
//!
//! ```no_run
//! use feign_tests::interop::{http_get, JavaApp};
//!
//! let server = JavaApp::eureka_server(&[]).expect("the Java fixtures");
//! let apps = http_get(&format!("{}apps", server.eureka_url())).unwrap();
//! assert_eq!(apps.status, 200);
//! server.stop();
//! ```

mod http;

pub use http::{http_get, http_request, HttpResponse};

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

/// How long a Java app may take to answer its readiness probe.
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// How long [`JavaApp::stop`] waits after SIGTERM before killing.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// Pause between readiness probes.
const PROBE_INTERVAL: Duration = Duration::from_millis(250);

/// Start attempts on fresh ports when the app dies before becoming ready (a port taken between
/// choosing it and the JVM binding it).
const START_ATTEMPTS: usize = 3;

/// JVM options every fixture gets: exit when stdin closes, i.e. when the test process ends
/// however it ends, and stay on IPv4 like the 127.0.0.1 the tests use.
const JVM_OPTIONS: &[&str] = &[
    "-Dfeign.interop.exitOnStdinEof=true",
    "-Djava.net.preferIPv4Stack=true",
];

/// JVM options favouring start-up time over peak speed (the fixtures are small and short-lived),
/// unless a launcher is given others.
const STARTUP_JVM_OPTIONS: &[&str] = &["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m"];

/// Which fixture a [`JavaApp`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fixture {
    EurekaServer,
    JavaSvc,
}

impl Fixture {
    /// The Maven project directory under the interop directory.
    fn project(self) -> &'static str {
        match self {
            Fixture::EurekaServer => "eureka-server",
            Fixture::JavaSvc => "java-svc",
        }
    }

    /// The path answering 200 once the app serves requests.
    fn ready_path(self) -> &'static str {
        match self {
            Fixture::EurekaServer => "/eureka/apps",
            Fixture::JavaSvc => "/hello",
        }
    }
}

/// Why a fixture cannot start: `java` or its jar is missing. Its `Debug` is its message, so a
/// test's `.expect(..)` shows what to do.
#[derive(Clone, PartialEq, Eq)]
pub struct Unavailable {
    why: String,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the Java interop fixtures are unavailable: {}", self.why)
    }
}

impl fmt::Debug for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Unavailable {}

/// A running Java fixture: a child JVM listening on `127.0.0.1:port`.
///
/// Dropping it kills the process (SIGKILL) and waits for it; [`JavaApp::stop`] shuts it down
/// gracefully instead. Should the test process die without dropping it, the JVM notices its
/// stdin closing and exits on its own.
pub struct JavaApp {
    fixture: Fixture,
    child: Option<Child>,
    port: u16,
    /// Everything after `java`, including the port, reused by [`JavaApp::restart`].
    args: Vec<String>,
    log_path: PathBuf,
    /// The `Authorization` value the readiness probe sends, for a server behind basic auth.
    probe_authorization: Option<String>,
}

impl fmt::Debug for JavaApp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JavaApp")
            .field("fixture", &self.fixture)
            .field("pid", &self.child.as_ref().map(Child::id))
            .field("port", &self.port)
            .field("log_path", &self.log_path)
            .finish()
    }
}

impl JavaApp {
    /// Starts the Spring Eureka server on a free 127.0.0.1 port and waits (at most 90 s) until
    /// `GET /eureka/apps` answers 200.
    ///
    /// `extra_args` are Spring arguments appended to the command line, e.g.
    /// `"--eureka.server.enable-self-preservation=true"`. The server is standalone and tuned for
    /// tests: self-preservation off, eviction every second, no read-only response cache.
    ///
    /// Returns [`Unavailable`] when `java` or the jar is missing. Panics, with
    /// the tail of the app's log, if the server does not become ready.
    pub fn eureka_server(extra_args: &[&str]) -> Result<JavaApp, Unavailable> {
        Self::launch(Fixture::EurekaServer, STARTUP_JVM_OPTIONS, &[], extra_args)
    }

    /// [`JavaApp::eureka_server`] with `jvm_options` in place of the start-up tuning
    /// (`-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m`): `&[]` runs the JVM with its
    /// defaults (both JIT tiers, the default collector and heap size), as a load test should.
    pub fn eureka_server_with_jvm(
        jvm_options: &[&str],
        extra_args: &[&str],
    ) -> Result<JavaApp, Unavailable> {
        Self::launch(Fixture::EurekaServer, jvm_options, &[], extra_args)
    }

    /// [`JavaApp::eureka_server`] behind Spring Security's basic auth (the fixture's
    /// `basic-auth` profile): every request needs `user` and `password`, others get 401.
    pub fn eureka_server_with_basic_auth(
        user: &str,
        password: &str,
        extra_args: &[&str],
    ) -> Result<JavaApp, Unavailable> {
        use base64::Engine;
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        let auth = [
            "--spring.profiles.active=basic-auth".to_owned(),
            format!("--spring.security.user.name={user}"),
            format!("--spring.security.user.password={password}"),
        ];
        let mut args: Vec<&str> = auth.iter().map(String::as_str).collect();
        args.extend_from_slice(extra_args);
        Self::launch_with(
            Fixture::EurekaServer,
            STARTUP_JVM_OPTIONS,
            &args,
            Some(format!("Basic {token}")),
        )
    }

    /// A Eureka server shared by every caller in this test binary, started on first use with
    /// default arguments and stopped when the process exits.
    ///
    /// Cheaper than one server per test on a small machine; tests sharing it must use distinct
    /// application names and must not expect an empty registry. Tests that restart or stop the
    /// server need their own [`JavaApp::eureka_server`]. Fails as that does.
    pub fn shared_eureka_server() -> Result<&'static JavaApp, Unavailable> {
        static SHARED: OnceLock<Result<JavaApp, Unavailable>> = OnceLock::new();
        SHARED
            .get_or_init(|| Self::eureka_server(&[]))
            .as_ref()
            .map_err(Unavailable::clone)
    }

    /// Starts the `java-svc` Spring Boot app registered with the Eureka server at `eureka_url`
    /// (e.g. [`JavaApp::eureka_url`] of a server) and waits (at most 90 s) until `GET /hello`
    /// answers 200.
    ///
    /// The app registers as `JAVA-SVC` (VIP `java-svc`, instance id `java-svc:{port}`, address
    /// 127.0.0.1), renews every 2 s with a 6 s lease, and fetches the registry every 2 s.
    /// `GET /peers/{serviceId}` lists the URIs it discovers for a VIP. Override any of it with
    /// `extra_args`, e.g. `"--spring.application.name=java-svc-2"`.
    ///
    /// Fails exactly as [`JavaApp::eureka_server`] does.
    pub fn java_svc(eureka_url: &str, extra_args: &[&str]) -> Result<JavaApp, Unavailable> {
        let zone = format!("--eureka.client.service-url.defaultZone={eureka_url}");
        Self::launch(Fixture::JavaSvc, STARTUP_JVM_OPTIONS, &[&zone], extra_args)
    }

    /// The port the app listens on, on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `http://127.0.0.1:PORT/eureka/`: the service URL of a Eureka server (meaningful for
    /// [`JavaApp::eureka_server`]).
    pub fn eureka_url(&self) -> String {
        format!("{}/eureka/", self.base_url())
    }

    /// The file receiving the app's stdout and stderr.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The process id of the running JVM, if one is running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops the app gracefully and waits for it: SIGTERM, so Spring runs its shutdown hooks
    /// (`java-svc` deregisters from Eureka), then SIGKILL after 20 s.
    pub fn stop(mut self) {
        self.terminate();
    }

    /// Kills the app at once (SIGKILL) and waits for it: no shutdown hooks run, so `java-svc`
    /// stays registered until its lease expires and the server evicts it.
    pub fn kill(mut self) {
        self.kill_now();
    }

    /// Stops the app gracefully, starts it again on the same port with the same arguments and
    /// waits until it is ready. A restarted Eureka server has an empty registry.
    ///
    /// Panics, with the tail of the log, if it does not become ready again.
    pub fn restart(&mut self) {
        self.terminate();
        let mut last_failure = String::new();
        for _ in 0..START_ATTEMPTS {
            match self.spawn().and_then(|()| self.wait_ready()) {
                Ok(()) => return,
                Err(failure) => {
                    self.kill_now();
                    last_failure = failure.to_string();
                    if !failure.exited_early {
                        break;
                    }
                    // The old socket may linger briefly; try the same port again.
                    thread::sleep(Duration::from_secs(1));
                }
            }
        }
        panic!("{}", self.failure_report(&last_failure));
    }

    fn launch(
        fixture: Fixture,
        jvm_options: &[&str],
        fixed_args: &[&str],
        extra_args: &[&str],
    ) -> Result<JavaApp, Unavailable> {
        let args: Vec<&str> = fixed_args.iter().chain(extra_args).copied().collect();
        Self::launch_with(fixture, jvm_options, &args, None)
    }

    /// Starts `fixture` with `args` after the port; the readiness probe sends
    /// `probe_authorization` when given.
    fn launch_with(
        fixture: Fixture,
        jvm_options: &[&str],
        app_args: &[&str],
        probe_authorization: Option<String>,
    ) -> Result<JavaApp, Unavailable> {
        let (java, jar) = match locate(fixture) {
            Ok(found) => found,
            Err(why) => return Err(Unavailable { why }),
        };
        let mut last_report = String::new();
        for _ in 0..START_ATTEMPTS {
            let port = match free_port() {
                Ok(port) => port,
                Err(e) => panic!("cannot pick a free port for {}: {e}", fixture.project()),
            };
            let mut args = vec![java.clone()];
            args.extend(JVM_OPTIONS.iter().chain(jvm_options).map(|s| s.to_string()));
            args.extend(["-jar".to_owned(), jar.display().to_string()]);
            args.push(format!("--server.port={port}"));
            args.extend(app_args.iter().map(|s| s.to_string()));
            let mut app = JavaApp {
                fixture,
                child: None,
                port,
                args,
                log_path: log_path(fixture, port),
                probe_authorization: probe_authorization.clone(),
            };
            match app.spawn().and_then(|()| app.wait_ready()) {
                Ok(()) => return Ok(app),
                Err(failure) => {
                    app.kill_now();
                    last_report = app.failure_report(&failure.to_string());
                    if !failure.exited_early {
                        break;
                    }
                }
            }
        }
        panic!("{last_report}");
    }

    /// Starts the JVM, appending its output to the log file.
    fn spawn(&mut self) -> Result<(), NotReady> {
        let open = |path: &Path| {
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir)?;
            }
            OpenOptions::new().create(true).append(true).open(path)
        };
        let mut log: File = open(&self.log_path).map_err(|e| {
            NotReady::other(format!("cannot open {}: {e}", self.log_path.display()))
        })?;
        // A line marking each start, useful after a restart.
        let _ = writeln!(log, "=== feign-tests: starting {}", self.args.join(" "));
        let stderr = log
            .try_clone()
            .map_err(|e| NotReady::other(format!("cannot share the log file: {e}")))?;
        let child = Command::new(&self.args[0])
            .args(&self.args[1..])
            // The child exits when this pipe closes (see JVM_OPTIONS); `Child` holds its write end.
            .stdin(Stdio::piped())
            .stdout(log)
            .stderr(stderr)
            .spawn()
            .map_err(|e| NotReady::other(format!("cannot start {}: {e}", self.args[0])))?;
        self.child = Some(child);
        Ok(())
    }

    /// Polls the readiness path until it answers 200, the process exits, or time runs out.
    fn wait_ready(&mut self) -> Result<(), NotReady> {
        let url = format!("{}{}", self.base_url(), self.fixture.ready_path());
        let started = Instant::now();
        loop {
            if let Some(child) = self.child.as_mut() {
                match child.try_wait() {
                    Ok(Some(status)) => {
                        return Err(NotReady {
                            exited_early: true,
                            message: format!("exited before ready ({status})"),
                        })
                    }
                    Ok(None) => {}
                    Err(e) => return Err(NotReady::other(format!("cannot poll the process: {e}"))),
                }
            }
            let mut headers = vec![("Accept", "application/json")];
            if let Some(authorization) = &self.probe_authorization {
                headers.push(("Authorization", authorization));
            }
            if http_request("GET", &url, &headers, None).is_ok_and(|r| r.status == 200) {
                return Ok(());
            }
            if started.elapsed() > READY_TIMEOUT {
                return Err(NotReady::other(format!(
                    "{url} did not answer 200 within {READY_TIMEOUT:?}"
                )));
            }
            thread::sleep(PROBE_INTERVAL);
        }
    }

    /// A panic message naming the fixture, the failure and the tail of the log.
    fn failure_report(&self, failure: &str) -> String {
        let log = fs::read_to_string(&self.log_path).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(80).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!(
            "interop fixture {} on port {} failed: {failure}\n--- last lines of {} ---\n{}",
            self.fixture.project(),
            self.port,
            self.log_path.display(),
            tail.join("\n")
        )
    }

    /// SIGTERM, wait up to [`STOP_TIMEOUT`], then SIGKILL.
    fn terminate(&mut self) {
        let Some(child) = self.child.as_mut() else {
            return;
        };
        let signalled = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if signalled {
            let deadline = Instant::now() + STOP_TIMEOUT;
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    self.child = None;
                    return;
                }
                thread::sleep(Duration::from_millis(100));
            }
        }
        self.kill_now();
    }

    /// SIGKILL and reap.
    fn kill_now(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Why a start attempt failed.
#[derive(Debug)]
struct NotReady {
    /// The process exited on its own (typically: its port was taken), so another try may work.
    exited_early: bool,
    message: String,
}

impl NotReady {
    fn other(message: String) -> Self {
        Self {
            exited_early: false,
            message,
        }
    }
}

impl fmt::Display for NotReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Drop for JavaApp {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Finds the `java` executable and the fixture's jar.
fn locate(fixture: Fixture) -> Result<(String, PathBuf), String> {
    let java = match std::env::var_os("JAVA_HOME") {
        Some(home) if Path::new(&home).join("bin/java").is_file() => {
            Path::new(&home).join("bin/java").display().to_string()
        }
        _ => "java".to_owned(),
    };
    let runs = Command::new(&java)
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !runs {
        return Err(format!(
            "`{java} -version` does not run (is a JDK 17 installed?)"
        ));
    }
    let dir = interop_dir().join(fixture.project()).join("target");
    let jar = fs::read_dir(&dir)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jar"))
        .max_by_key(|path| fs::metadata(path).and_then(|m| m.modified()).ok());
    match jar {
        Some(jar) => Ok((java, jar)),
        None => Err(format!(
            "no jar in {} (build it with tests/interop/build.sh)",
            dir.display()
        )),
    }
}

/// `$FEIGN_INTEROP_DIR`, or this package's `interop` directory.
fn interop_dir() -> PathBuf {
    match std::env::var_os("FEIGN_INTEROP_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("interop"),
    }
}

/// A port that was free on 127.0.0.1 a moment ago.
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A fresh log file path under the cargo target directory (or the temp dir when the running
/// executable is not inside one).
fn log_path(fixture: Fixture, port: u16) -> PathBuf {
    static SEQUENCE: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::current_exe()
        .ok()
        .and_then(|exe| {
            let parent = exe.parent()?;
            // Test binaries live in `<target>/<profile>/deps`.
            let profile_dir = if parent.ends_with("deps") {
                parent.parent()?
            } else {
                parent
            };
            Some(profile_dir.join("interop-logs"))
        })
        .unwrap_or_else(|| std::env::temp_dir().join("feign-interop-logs"));
    dir.join(format!(
        "{}-{port}-{}-{}.log",
        fixture.project(),
        std::process::id(),
        SEQUENCE.fetch_add(1, Ordering::Relaxed)
    ))
}
