//! Slow, idle and surplus connections: the header-read, body-read and idle timeouts, the
//! minimum response rate, the connection cap, and a crowd of slow and idle clients beside one
//! that works. The crowd is shared with `fd_limit`, which runs it against a registry with few
//! file descriptors.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use crate::support::{dev, http};

/// `GET /eureka/apps` with keep-alive, as raw bytes.
fn apps_request(addr: SocketAddr) -> String {
    format!("GET /eureka/apps HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json\r\n\r\n")
}

/// Reads one response (header and `Content-Length` body); its status, or `None` on EOF or an
/// error before it is complete.
pub(crate) async fn read_response(stream: &mut TcpStream) -> Option<u16> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap_or(0));
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(status)
}

/// Whether the server has closed `stream` (EOF or reset) within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout(within, stream.read(&mut byte)).await,
        Ok(Ok(0) | Err(_))
    )
}

/// Clients that send a request header one byte a second and never finish it.
pub(crate) fn slow_headers(addr: SocketAddr, count: usize) -> Vec<JoinHandle<()>> {
    (0..count)
        .map(|_| {
            tokio::spawn(async move {
                let Ok(mut stream) = TcpStream::connect(addr).await else {
                    return;
                };
                for byte in apps_request(addr).bytes().cycle() {
                    if stream.write_all(&[byte]).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            })
        })
        .collect()
}

/// Clients that send a registration's head and then its body a byte a second, never finishing
/// it.
pub(crate) fn slow_bodies(addr: SocketAddr, count: usize) -> Vec<JoinHandle<()>> {
    (0..count)
        .map(|_| {
            tokio::spawn(async move {
                let Ok(mut stream) = TcpStream::connect(addr).await else {
                    return;
                };
                let head = format!(
                    "POST /eureka/apps/A HTTP/1.1\r\nHost: {addr}\r\n\
                     Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{"
                );
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    if stream.write_all(b" ").await.is_err() {
                        return;
                    }
                }
            })
        })
        .collect()
}

/// Connections that made one request each and then stay open and silent; with how many of
/// them were answered (stopping at the first that is not).
pub(crate) async fn idle_keep_alive(addr: SocketAddr, count: usize) -> (Vec<TcpStream>, usize) {
    let mut streams = Vec::with_capacity(count);
    let mut answered = 0;
    for _ in 0..count {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(apps_request(addr).as_bytes())
            .await
            .expect("send");
        let response = tokio::time::timeout(Duration::from_secs(5), read_response(&mut stream))
            .await
            .ok()
            .flatten();
        streams.push(stream);
        if response != Some(200) {
            // The server is stuck: the rest would wait as long each.
            break;
        }
        answered += 1;
    }
    (streams, answered)
}

/// A fresh client's `GET apps`, which must be answered 200 within a second.
pub(crate) async fn served_within_a_second(base: &str) {
    let started = Instant::now();
    let response = tokio::time::timeout(
        Duration::from_secs(1),
        http()
            .get(format!("{base}apps"))
            .header("Accept", "application/json")
            .send(),
    )
    .await
    .expect("answered within a second")
    .expect("answered");
    assert_eq!(response.status(), 200);
    assert!(started.elapsed() < Duration::from_secs(1));
}

/// 200 clients sending headers a byte a second and 1,000 idle keep-alive connections beside
/// a client that works: it is served within a second, before and after the crowd is complete.
#[tokio::test]
async fn slow_and_idle_clients_do_not_stop_a_working_one() {
    let server = dev().start().await.unwrap();
    let addr = server.local_addr();
    let slow = slow_headers(addr, 200);
    tokio::time::sleep(Duration::from_millis(200)).await;
    served_within_a_second(server.url()).await;
    let (idle, answered) = idle_keep_alive(addr, 1000).await;
    assert_eq!(answered, 1000, "every idle client was answered once");
    served_within_a_second(server.url()).await;
    for task in slow {
        task.abort();
    }
    drop(idle);
    server.shutdown().await;
}

/// A header sent too slowly is cut off at the header-read timeout, however steadily its bytes
/// come.
#[tokio::test]
async fn a_header_sent_too_slowly_is_cut_off() {
    let server = dev()
        .header_read_timeout(Duration::from_secs(1))
        .start()
        .await
        .unwrap();
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    let started = Instant::now();
    let mut cut_off = false;
    for byte in apps_request(server.local_addr()).bytes() {
        if stream.write_all(&[byte]).await.is_err() {
            cut_off = true;
            break;
        }
        if closed_within(&mut stream, Duration::from_millis(200)).await {
            cut_off = true;
            break;
        }
    }
    assert!(cut_off, "the whole header was accepted");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "{took:?}"
    );
    server.shutdown().await;
}

/// An idle keep-alive connection outlives the header-read timeout, serves a second request,
/// and is closed once idle for the idle timeout.
#[tokio::test]
async fn an_idle_connection_lasts_the_idle_timeout() {
    let server = dev()
        .header_read_timeout(Duration::from_millis(500))
        .idle_timeout(Duration::from_secs(2))
        .start()
        .await
        .unwrap();
    let addr = server.local_addr();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(apps_request(addr).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_response(&mut stream).await, Some(200));
    assert!(!closed_within(&mut stream, Duration::from_secs(1)).await);
    stream
        .write_all(apps_request(addr).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_response(&mut stream).await, Some(200));
    let idle = Instant::now();
    assert!(closed_within(&mut stream, Duration::from_secs(4)).await);
    let took = idle.elapsed();
    assert!(took >= Duration::from_millis(1800), "{took:?}");
    server.shutdown().await;
}

/// At the connection cap a new connection is served, and the one idle the longest is closed.
#[tokio::test]
async fn at_the_cap_the_longest_idle_connection_makes_room() {
    let server = dev().max_connections(5).start().await.unwrap();
    let addr = server.local_addr();
    let (mut idle, answered) = idle_keep_alive(addr, 5).await;
    assert_eq!(answered, 5);
    served_within_a_second(server.url()).await;
    assert!(
        closed_within(&mut idle[0], Duration::from_secs(2)).await,
        "the longest idle was kept"
    );
    // The youngest of the five is still open and answers.
    let youngest = idle.last_mut().unwrap();
    youngest
        .write_all(apps_request(addr).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_response(youngest).await, Some(200));
    server.shutdown().await;
}

/// A body sent too slowly is cut off at the body-read timeout, however steadily its bytes come
/// (one every 200 ms here: a timeout between chunks would never end it).
#[tokio::test]
async fn a_body_sent_too_slowly_is_cut_off() {
    let server = dev()
        .body_read_timeout(Duration::from_secs(1))
        .start()
        .await
        .unwrap();
    let addr = server.local_addr();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /eureka/apps/A HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: 1000\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let mut cut_off = false;
    for _ in 0..25 {
        if stream.write_all(b" ").await.is_err()
            || closed_within(&mut stream, Duration::from_millis(200)).await
        {
            cut_off = true;
            break;
        }
    }
    assert!(cut_off, "the body kept its connection for 5 s");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(4),
        "{took:?}"
    );
    server.shutdown().await;
}

/// At the cap, a connection stalled in the middle of a body makes room for a working client,
/// as an idle one does: the server is not working on it, its client is.
#[tokio::test]
async fn at_the_cap_a_connection_stalled_mid_body_makes_room() {
    let server = dev()
        .max_connections(5)
        .body_read_timeout(Duration::from_secs(60))
        .start()
        .await
        .unwrap();
    let addr = server.local_addr();
    let stalled = slow_bodies(addr, 5);
    tokio::time::sleep(Duration::from_millis(300)).await;
    served_within_a_second(server.url()).await;
    served_within_a_second(server.url()).await;
    for task in stalled {
        task.abort();
    }
    server.shutdown().await;
}

/// `count` registrations of about 60 KB each (15 metadata values of 4,000 bytes).
async fn register_large(base: &str, count: usize) {
    for i in 0..count {
        let body = crate::support::large_instance("BIG", &format!("big-{i}"), 15, "x");
        assert_eq!(crate::support::register(base, "BIG", &body).await, 204);
    }
}

/// A client that reads a 6 MB registry a kilobyte a second (with a 4 KiB receive buffer, so
/// the server's writes block) is cut off once the response falls behind the minimum rate; a
/// client that reads it at once gets all of it under the same setting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_taken_too_slowly_is_cut_off() {
    let server = crate::support::unlimited()
        .min_response_rate(1024 * 1024, Duration::from_secs(1))
        .start()
        .await
        .unwrap();
    let addr = server.local_addr();
    register_large(server.url(), 100).await;
    let whole = http()
        .get(format!("{}apps", server.url()))
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap();
    assert_eq!(whole.status(), 200);
    let size = whole.bytes().await.unwrap().len();
    assert!(size > 6_000_000, "{size} bytes");

    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    stream
        .write_all(apps_request(addr).as_bytes())
        .await
        .unwrap();
    let started = Instant::now();
    let mut received = 0;
    let mut chunk = [0u8; 1024];
    let ended = loop {
        if started.elapsed() > Duration::from_secs(15) {
            break false;
        }
        match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut chunk)).await {
            Ok(Ok(0) | Err(_)) => break true,
            Ok(Ok(n)) => received += n,
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    assert!(ended, "a slow reader kept its response for 15 s");
    assert!(received < size / 2, "{received} of {size} bytes read");
    server.shutdown().await;
}
