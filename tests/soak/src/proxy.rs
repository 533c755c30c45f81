//! A fault-injecting TCP proxy on 127.0.0.1, its mode switchable while connections are open.
//!
//! Every chunk is relayed under the mode current at that moment, so a pooled keep-alive
//! connection meets a fault as soon as it is switched on, not only new connections.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

/// What the proxy does with the bytes it relays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Relays both ways untouched.
    Pass,
    /// Holds every chunk of the answer this long before passing it on.
    Latency(Duration),
    /// Answers a request with a TCP reset (`SO_LINGER` 0, then close).
    Reset,
    /// Accepts and reads requests, never passes them on and never answers.
    Blackhole,
    /// Passes the request on, loses the answer and keeps the client's connection open without
    /// a FIN: the server is gone as far as the client can never tell.
    HalfOpen,
}

impl Mode {
    /// Whether calls through the proxy can succeed in this mode within the clients' timeouts.
    pub(crate) fn serves(self) -> bool {
        matches!(self, Mode::Pass | Mode::Latency(_))
    }
}

/// A running proxy: stops, with every connection it holds, when dropped.
pub(crate) struct FaultProxy {
    addr: SocketAddr,
    mode: Arc<Mutex<Mode>>,
    accept: JoinHandle<()>,
}

impl FaultProxy {
    /// Listens on a free loopback port and relays to `upstream`, in [`Mode::Pass`].
    pub(crate) async fn start(upstream: SocketAddr) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let mode = Arc::new(Mutex::new(Mode::Pass));
        let accept = tokio::spawn(accept_loop(listener, upstream, mode.clone()));
        Ok(FaultProxy { addr, mode, accept })
    }

    /// Where clients connect.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The mode in force.
    pub(crate) fn mode(&self) -> Mode {
        current(&self.mode)
    }

    /// Switches the mode, for new and open connections alike.
    pub(crate) fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap_or_else(|e| e.into_inner()) = mode;
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        // The connections live in the accept task's JoinSet: aborting it closes them all.
        self.accept.abort();
    }
}

fn current(mode: &Mutex<Mode>) -> Mode {
    *mode.lock().unwrap_or_else(|e| e.into_inner())
}

async fn accept_loop(listener: TcpListener, upstream: SocketAddr, mode: Arc<Mutex<Mode>>) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        let _ = client.set_nodelay(true);
        connections.spawn(relay(client, upstream, mode.clone()));
    }
}

/// Closes `stream` with a reset instead of a FIN.
fn reset(stream: TcpStream) {
    let _ = stream.set_zero_linger();
    drop(stream);
}

/// Reads and discards until the peer closes.
async fn swallow(mut stream: TcpStream) {
    let mut buf = [0u8; 4096];
    while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
}

async fn relay(client: TcpStream, upstream: SocketAddr, mode: Arc<Mutex<Mode>>) {
    match current(&mode) {
        Mode::Reset => return reset(client),
        Mode::Blackhole => return swallow(client).await,
        _ => {}
    }
    let Ok(server) = TcpStream::connect(upstream).await else {
        return reset(client);
    };
    let _ = server.set_nodelay(true);
    pump(client, server, &mode).await;
}

/// Relays chunk by chunk, each under the mode in force when it arrives.
async fn pump(mut client: TcpStream, mut server: TcpStream, mode: &Mutex<Mode>) {
    let mut request = [0u8; 4096];
    let mut answer = [0u8; 4096];
    // Once a connection has lost a request or an answer it never speaks again.
    let mut mute = false;
    loop {
        tokio::select! {
            read = client.read(&mut request) => {
                let n = match read {
                    Ok(n) if n > 0 => n,
                    _ => return,
                };
                match current(mode) {
                    Mode::Reset => return reset(client),
                    Mode::Blackhole => mute = true,
                    Mode::HalfOpen => {
                        mute = true;
                        if server.write_all(&request[..n]).await.is_err() {
                            return swallow(client).await;
                        }
                    }
                    Mode::Pass | Mode::Latency(_) if mute => {}
                    Mode::Pass | Mode::Latency(_) => {
                        if server.write_all(&request[..n]).await.is_err() {
                            return;
                        }
                    }
                }
            }
            read = server.read(&mut answer), if !mute => {
                let n = match read {
                    Ok(n) if n > 0 => n,
                    _ => return,
                };
                match current(mode) {
                    Mode::Reset => return reset(client),
                    Mode::Blackhole | Mode::HalfOpen => mute = true,
                    Mode::Latency(delay) => {
                        tokio::time::sleep(delay).await;
                        if client.write_all(&answer[..n]).await.is_err() {
                            return;
                        }
                    }
                    Mode::Pass => {
                        if client.write_all(&answer[..n]).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    }
}
