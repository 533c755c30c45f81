//! One connection's activity: requests in flight, when it fell idle, when the next request's
//! header began; the socket wrapper that notices the header's first bytes, and the response
//! body that keeps the connection busy until it is sent.
//!
//! hyper's own `header_read_timeout` also runs while a kept-alive connection waits for its next
//! request, so it cannot tell a slow header from an idle connection; these timers can.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::Instant;

/// The connection timeouts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// From a request's first byte to its last header byte.
    pub(crate) header_read: Duration,
    /// From the end of a response (or the accept) to the next request's first byte.
    pub(crate) idle: Duration,
}

/// What the accept loop and a connection's task know of the connection.
#[derive(Debug)]
pub(crate) struct Activity {
    base: Instant,
    requests: AtomicUsize,
    /// Milliseconds since `base` at which the connection last fell idle.
    idle_since_ms: AtomicU64,
    /// Milliseconds since `base` (plus one, so 0 means none) of the first byte of a request
    /// whose header is not complete yet.
    head_started_ms: AtomicU64,
    /// Woken when the accept loop takes the connection's place.
    pub(crate) evicted: Notify,
    /// Woken when a request's first bytes arrive, which brings the connection's deadline in.
    pub(crate) head_started: Notify,
}

impl Activity {
    /// A connection accepted now; `base` is the accept loop's clock origin.
    pub(crate) fn new(base: Instant) -> Self {
        let activity = Self {
            base,
            requests: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(0),
            head_started_ms: AtomicU64::new(0),
            evicted: Notify::new(),
            head_started: Notify::new(),
        };
        activity
            .idle_since_ms
            .store(activity.now_ms(), Ordering::Relaxed);
        activity
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether no request is being answered.
    pub(crate) fn is_idle(&self) -> bool {
        self.requests.load(Ordering::Acquire) == 0
    }

    /// When the connection last fell idle (milliseconds on the accept loop's clock).
    pub(crate) fn idle_since_ms(&self) -> u64 {
        self.idle_since_ms.load(Ordering::Relaxed)
    }

    /// A request's header is complete: the connection is busy until the returned guard drops.
    pub(crate) fn begin(self: &Arc<Self>) -> Busy {
        self.requests.fetch_add(1, Ordering::AcqRel);
        self.head_started_ms.store(0, Ordering::Relaxed);
        Busy(self.clone())
    }

    fn read_some(&self) {
        if self.is_idle() && self.head_started_ms.load(Ordering::Relaxed) == 0 {
            self.head_started_ms
                .store(self.now_ms() + 1, Ordering::Relaxed);
            self.head_started.notify_one();
        }
    }

    /// When the connection's current timeout ends, if it has one now: a busy connection has
    /// none (it is checked again after `recheck`).
    pub(crate) fn deadline(&self, timeouts: Timeouts) -> Option<Instant> {
        if !self.is_idle() {
            return None;
        }
        let head = self.head_started_ms.load(Ordering::Relaxed);
        let (since, limit) = if head > 0 {
            (head - 1, timeouts.header_read)
        } else {
            (self.idle_since_ms(), timeouts.idle)
        };
        Some(self.base + Duration::from_millis(since) + limit)
    }
}

/// A request being answered; dropped when its response body is sent or abandoned.
#[derive(Debug)]
pub(crate) struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let activity = &self.0;
        activity
            .idle_since_ms
            .store(activity.now_ms(), Ordering::Relaxed);
        activity.requests.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The accepted socket, reporting the first bytes of each request's header.
#[derive(Debug)]
pub(crate) struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
}

impl Watched {
    /// Wraps `stream`, reporting to `activity`.
    pub(crate) fn new(stream: TcpStream, activity: Arc<Activity>) -> Self {
        Self { stream, activity }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.read_some();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A response body that keeps its connection busy until it is sent.
#[derive(Debug)]
pub(crate) struct Guarded {
    body: Body,
    _busy: Busy,
}

impl Guarded {
    /// `body`, keeping `busy` until it ends.
    pub(crate) fn new(body: Body, busy: Busy) -> Self {
        Self { body, _busy: busy }
    }
}

impl http_body::Body for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
