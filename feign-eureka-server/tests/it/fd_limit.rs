//! A registry that may open only 256 file descriptors: the crowd of `connections` (slow
//! headers, bodies stalled after their first byte, idle keep-alive connections) beside a
//! working client, and a crowd of watches that leaves the accept loop without descriptors.
//!
//! The limit (`RLIMIT_NOFILE`) belongs to a whole process, and lowering it here would starve
//! the other tests of this binary, so the registry runs in a child process: this test binary
//! run again with [`CHILD`] set, which lowers its own limit, starts the registry, prints its
//! address, logs warnings to its standard error and serves until its standard input closes.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::connections::{idle_keep_alive, served_within_a_second, slow_bodies, slow_headers};
use crate::support::dev;

/// Set in the child process that serves the registry.
const CHILD: &str = "FEIGN_EUREKA_FD_LIMIT_CHILD";
/// The descriptors the child may open.
const DESCRIPTORS: u64 = 256;

/// This binary run again as the child serving a registry for `test` (its full name): the
/// child, the registry's address, and the lines of the child's standard error so far.
async fn child_registry(test: &str) -> (Child, SocketAddr, Arc<Mutex<Vec<String>>>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the child registry starts");
    // Reads the child's output to its end (the harness writes more after the address).
    let stdout = child.stdout.take().unwrap();
    let (found, address) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut found = Some(found);
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some((_, addr)) = line.split_once("registry at ") {
                if let Some(found) = found.take() {
                    let _ = found.send(addr.trim().to_owned());
                }
            }
        }
    });
    let errors = Arc::new(Mutex::new(Vec::new()));
    let stderr = child.stderr.take().unwrap();
    let lines = errors.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            lines.lock().unwrap().push(line);
        }
    });
    let addr = address.await.expect("the child prints its address");
    (child, addr.parse().unwrap(), errors)
}

/// Closes the child's standard input and waits for it to end well.
async fn stop(mut child: Child) {
    drop(child.stdin.take());
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "the child registry failed: {status}");
}

#[tokio::test]
async fn a_registry_with_256_descriptors_serves_beside_1500_slow_and_idle_clients() {
    if std::env::var_os(CHILD).is_some() {
        return serve_in_child().await;
    }
    let (child, addr, _) = child_registry(
        "fd_limit::a_registry_with_256_descriptors_serves_beside_1500_slow_and_idle_clients",
    )
    .await;
    let base = format!("http://{addr}/eureka/");

    let slow = slow_headers(addr, 200);
    let stalled = slow_bodies(addr, 300);
    tokio::time::sleep(Duration::from_millis(300)).await;
    served_within_a_second(&base).await;
    let (idle, answered) = idle_keep_alive(addr, 1000).await;
    // More connections than descriptors: each was answered, older ones closed to make room.
    assert_eq!(answered, 1000, "every idle client was answered once");
    served_within_a_second(&base).await;
    served_within_a_second(&base).await;

    for task in slow.into_iter().chain(stalled) {
        task.abort();
    }
    drop(idle);
    stop(child).await;
}

/// 300 watches waiting 3 s each on a registry with 256 descriptors: the server is working on
/// every connection it holds, so none makes room and the accept loop fails again every 50 ms;
/// it warns once, not twenty times a second.
#[tokio::test]
async fn running_out_of_descriptors_is_logged_once_a_minute() {
    if std::env::var_os(CHILD).is_some() {
        return serve_in_child().await;
    }
    let (child, addr, errors) =
        child_registry("fd_limit::running_out_of_descriptors_is_logged_once_a_minute").await;
    let version = crate::support::http()
        .get(format!("http://{addr}/eureka/watch"))
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap()
        .headers()["x-feign-registry-version"]
        .to_str()
        .unwrap()
        .to_owned();
    let request = format!(
        "GET /eureka/watch?after={version}&timeout=3000 HTTP/1.1\r\nHost: {addr}\r\n\
         Accept: application/json\r\n\r\n"
    );
    let mut watches = Vec::new();
    for _ in 0..300 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        watches.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    drop(watches);
    stop(child).await;
    let errors = errors.lock().unwrap();
    let warned = errors
        .iter()
        .filter(|line| line.contains("accepting a connection failed"))
        .count();
    assert_eq!(warned, 1, "{errors:#?}");
}

/// The child's part: lower the limit, log warnings to standard error, serve, stop when the
/// parent closes standard input.
async fn serve_in_child() {
    let limit = rustix::process::Rlimit {
        current: Some(DESCRIPTORS),
        maximum: Some(DESCRIPTORS),
    };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit)
        .expect("lowering RLIMIT_NOFILE");
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter("warn")
        .init();
    let server = dev().start().await.expect("registry starts");
    // The harness may have begun the line with the test's name.
    println!("registry at {}", server.local_addr());
    // Ends on EOF, or after a minute should the parent be gone without closing it.
    let stdin_closed = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        while std::io::stdin().read_line(&mut line).is_ok_and(|n| n > 0) {}
    });
    let _ = tokio::time::timeout(Duration::from_secs(60), stdin_closed).await;
    server.shutdown().await;
}
