//! A TCP server writing exact bytes, for responses no HTTP library would send.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A raw TCP server on 127.0.0.1: for every connection, reads the request head, writes a reply
/// as is, then keeps the socket open for a while before closing. Counts connections.
#[derive(Debug)]
pub struct RawServer {
    /// Where it listens.
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
}

impl RawServer {
    /// Answers every connection with `reply` and closes it at once.
    pub async fn start(reply: &'static [u8]) -> RawServer {
        RawServer::start_with(move |_| reply.to_vec(), Duration::ZERO).await
    }

    /// Answers connection number `n` (from 0) with `reply(n)`, then keeps it open for `linger`.
    pub async fn start_with<F>(reply: F, linger: Duration) -> RawServer
    where
        F: Fn(usize) -> Vec<u8> + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let connections = Arc::new(AtomicUsize::new(0));
        let conns = connections.clone();
        let reply = Arc::new(reply);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let n = conns.fetch_add(1, Ordering::SeqCst);
                let reply = reply.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let _ = stream.write_all(&reply(n)).await;
                    if !linger.is_zero() {
                        tokio::time::sleep(linger).await;
                    }
                });
            }
        });
        RawServer { addr, connections }
    }

    /// The base URL, `http://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// How many connections were accepted.
    pub fn connection_count(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}
