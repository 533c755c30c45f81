//! The crowd of `connections` (slow headers, bodies stalled after their first byte, idle
//! keep-alive connections) against a registry that may open only 256 file descriptors.
//!
//! The limit (`RLIMIT_NOFILE`) belongs to a whole process, and lowering it here would starve
//! the other tests of this binary, so the registry runs in a child process: this test binary
//! run again with [`CHILD`] set, which lowers its own limit, starts the registry, prints its
//! address and serves until its standard input closes.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::connections::{idle_keep_alive, served_within_a_second, slow_bodies, slow_headers};
use crate::support::dev;

/// Set in the child process that serves the registry.
const CHILD: &str = "FEIGN_EUREKA_FD_LIMIT_CHILD";
/// The descriptors the child may open.
const DESCRIPTORS: u64 = 256;

#[tokio::test]
async fn a_registry_with_256_descriptors_serves_beside_1500_slow_and_idle_clients() {
    if std::env::var_os(CHILD).is_some() {
        return serve_in_child().await;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "fd_limit::a_registry_with_256_descriptors_serves_beside_1500_slow_and_idle_clients",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
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
    let addr = address.await.expect("the child prints its address");
    let addr: std::net::SocketAddr = addr.parse().unwrap();
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
    drop(child.stdin.take());
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "the child registry failed: {status}");
}

/// The child's part: lower the limit, serve, stop when the parent closes standard input.
async fn serve_in_child() {
    let limit = rustix::process::Rlimit {
        current: Some(DESCRIPTORS),
        maximum: Some(DESCRIPTORS),
    };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit)
        .expect("lowering RLIMIT_NOFILE");
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
