//! The accept loop: every connection served by hyper's HTTP/1 server under a header-read
//! timeout, a body-read timeout, a minimum response rate, an idle timeout and a connection cap.
//! At the cap, or when the process runs out of file descriptors, the connection that has waited
//! on its client the longest (idle, or sending a header or body, or not taking its response) is
//! closed to make room, so idle and slow clients cannot lock out a working one. On shutdown the
//! listener closes at once, idle connections close, and requests in flight are answered.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::conn::{Activity, Guarded, Timeouts, Watched};
use crate::peers::ClientCertificate;

/// How often a busy connection's timers are looked at again.
const RECHECK: Duration = Duration::from_millis(500);

/// The connection settings.
#[derive(Clone)]
pub(crate) struct ConnectionLimits {
    pub(crate) timeouts: Timeouts,
    /// The most connections open at once.
    pub(crate) max_connections: usize,
    /// Set when the registry serves HTTPS.
    pub(crate) tls: Option<TlsAcceptor>,
}

/// The open connections, by the order they were accepted in.
#[derive(Debug)]
struct Open {
    base: Instant,
    connections: Mutex<HashMap<u64, Arc<Activity>>>,
}

impl Open {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Closes the connection that has waited on its client the longest; false when the server
    /// is working on every connection.
    fn evict_longest_waiting(&self) -> bool {
        let mut connections = self.lock();
        let oldest = connections
            .iter()
            .filter_map(|(id, activity)| Some((activity.waiting_since_ms()?, *id)))
            .min()
            .map(|(_, id)| id);
        match oldest.and_then(|id| connections.remove(&id)) {
            Some(activity) => {
                activity.evicted.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Serves `router` on `listener` until `stop` fires, then until every connection has ended.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    mut stop: oneshot::Receiver<()>,
) {
    let open = Arc::new(Open {
        base: Instant::now(),
        connections: Mutex::new(HashMap::new()),
    });
    let (closing, closing_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let mut next_id = 0u64;
    let mut warnings = Throttled::default();
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => accepted,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                accept_failed(&open, &error, &mut warnings).await;
                continue;
            }
        };
        let activity = Arc::new(Activity::new(open.base));
        {
            let at_cap = open.lock().len() >= limits.max_connections;
            if at_cap && !open.evict_longest_waiting() {
                tracing::debug!(%peer, "every connection is busy; refusing a new one");
                continue;
            }
            open.lock().insert(next_id, activity.clone());
        }
        tasks.spawn(connection(
            ConnectionParts {
                stream,
                peer,
                router: router.clone(),
                activity,
                timeouts: limits.timeouts,
                tls: limits.tls.clone(),
                closing: closing_rx.clone(),
            },
            open.clone(),
            next_id,
        ));
        next_id += 1;
    }
    drop(listener);
    let _ = closing.send(true);
    while tasks.join_next().await.is_some() {}
}

/// An accept error: when descriptors ran out, a connection waiting on its client makes room;
/// otherwise (or when none is waiting) a short pause keeps the loop from spinning, and the
/// failure is logged at most once a minute.
async fn accept_failed(open: &Open, error: &io::Error, warnings: &mut Throttled) {
    // EMFILE and ENFILE: this process's or the system's descriptors are used up.
    let exhausted = matches!(error.raw_os_error(), Some(23 | 24));
    if exhausted && open.evict_longest_waiting() {
        // Let the evicted connection's task close its socket before accepting again.
        tokio::time::sleep(Duration::from_millis(1)).await;
    } else {
        if let Some(more) = warnings.due() {
            tracing::warn!(%error, more, "accepting a connection failed (more: failures since the last warning)");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A warning given at most once per [`Throttled::EVERY`], counting the ones held back.
#[derive(Debug, Default)]
struct Throttled {
    last: Option<Instant>,
    held_back: u64,
}

impl Throttled {
    const EVERY: Duration = Duration::from_secs(60);

    /// `Some(count held back since the last)` when the warning is due now.
    fn due(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self.last.is_some_and(|last| now < last + Self::EVERY) {
            self.held_back += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.held_back))
    }
}

/// A connection's byte stream: the socket, or TLS over it.
trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin {}

impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin> Io for T {}

/// What a connection's task is given.
struct ConnectionParts {
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    activity: Arc<Activity>,
    timeouts: Timeouts,
    tls: Option<TlsAcceptor>,
    closing: watch::Receiver<bool>,
}

async fn connection(parts: ConnectionParts, open: Arc<Open>, id: u64) {
    let ConnectionParts {
        stream,
        peer,
        router,
        activity,
        timeouts,
        tls,
        mut closing,
    } = parts;
    let _ = stream.set_nodelay(true);
    let watched = Watched::new(stream, activity.clone());
    let mut certificate = None;
    let io: Box<dyn Io> = match tls {
        None => Box::new(watched),
        // The handshake is bounded by the header-read timeout: a client that opens a
        // connection and stalls in the handshake is a slow client like any other.
        Some(acceptor) => {
            match tokio::time::timeout(timeouts.header_read, acceptor.accept(watched)).await {
                Ok(Ok(stream)) => {
                    // The client's certificate, when it showed one: a peer may be known by it.
                    certificate = stream
                        .get_ref()
                        .1
                        .peer_certificates()
                        .and_then(<[_]>::first)
                        .map(|c| ClientCertificate(Arc::new(c.clone().into_owned())));
                    Box::new(stream)
                }
                Ok(Err(error)) => {
                    tracing::debug!(%peer, %error, "a TLS handshake failed");
                    open.lock().remove(&id);
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "a TLS handshake took longer than the header-read timeout");
                    open.lock().remove(&id);
                    return;
                }
            }
        }
    };
    let tracked = activity.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let busy = tracked.begin();
        let mut request = request.map(|body| Body::new(tracked.receive(body)));
        request.extensions_mut().insert(ConnectInfo(peer));
        if let Some(certificate) = &certificate {
            request.extensions_mut().insert(certificate.clone());
        }
        let router = router.clone();
        async move {
            let response = router
                .oneshot(request)
                .await
                .unwrap_or_else(|never: Infallible| match never {});
            Ok::<_, Infallible>(response.map(|body| Body::new(Guarded::new(body, busy))))
        }
    });
    let served = http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(TokioIo::new(io), service);
    tokio::pin!(served);
    let mut finishing = false;
    loop {
        let deadline = activity
            .deadline(timeouts)
            .unwrap_or_else(|| Instant::now() + RECHECK);
        tokio::select! {
            _ = served.as_mut() => break,
            _ = tokio::time::sleep_until(deadline) => {
                if activity.deadline(timeouts).is_some_and(|d| d <= Instant::now()) {
                    tracing::debug!(%peer, "closing a connection past its header, body, response or idle timeout");
                    activity.closing();
                    break;
                }
            }
            () = activity.timer_changed.notified() => {}
            _ = activity.evicted.notified(), if !finishing => {
                if activity.waiting_since_ms().is_some() {
                    activity.closing();
                    break;
                }
                served.as_mut().graceful_shutdown();
                finishing = true;
            }
            _ = closing.changed(), if !finishing => {
                if activity.is_quiet() {
                    break;
                }
                served.as_mut().graceful_shutdown();
                finishing = true;
            }
        }
    }
    open.lock().remove(&id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_warning_is_given_once_a_minute_with_the_count_held_back() {
        let mut warnings = Throttled::default();
        assert_eq!(warnings.due(), Some(0));
        for _ in 0..1199 {
            assert_eq!(warnings.due(), None);
            tokio::time::advance(Duration::from_millis(50)).await;
        }
        tokio::time::advance(Duration::from_millis(50)).await;
        assert_eq!(warnings.due(), Some(1199));
    }
}
