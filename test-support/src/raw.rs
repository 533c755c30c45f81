//! A TCP server writing exact bytes, for responses no HTTP library would send.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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
        let reply = Arc::new(reply);
        RawServer::serve(move |n, mut stream| {
            let reply = reply.clone();
            async move {
                let _ = stream.write_all(&reply(n)).await;
                if !linger.is_zero() {
                    tokio::time::sleep(linger).await;
                }
            }
        })
        .await
    }

    /// Answers every connection with `head`, then one space every `every` until the client
    /// closes: never silent for a read timeout, never finished.
    pub async fn trickling(head: &'static [u8], every: Duration) -> RawServer {
        RawServer::serve(move |_, mut stream| async move {
            if stream.write_all(head).await.is_err() {
                return;
            }
            loop {
                tokio::time::sleep(every).await;
                if stream.write_all(b" ").await.is_err() {
                    return;
                }
            }
        })
        .await
    }

    /// Accepts connections on a loopback port; for each, reads the request head and hands the
    /// socket to `answer` with the connection's number.
    async fn serve<F, A>(answer: F) -> RawServer
    where
        F: Fn(usize, TcpStream) -> A + Send + Sync + 'static,
        A: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let connections = Arc::new(AtomicUsize::new(0));
        let conns = connections.clone();
        let answer = Arc::new(answer);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let n = conns.fetch_add(1, Ordering::SeqCst);
                let answer = answer.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    answer(n, stream).await;
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
