//! One connection's activity: requests in flight, when it fell idle, when the next request's
//! header began, whether a request's body is still arriving and how fast a response leaves; the
//! socket wrapper that notices a request's first bytes and every write, the request body that
//! says when it is complete, and the response body that keeps the connection busy until hyper
//! has taken it.
//!
//! hyper's own `header_read_timeout` also runs while a kept-alive connection waits for its next
//! request, so it cannot tell a slow header from an idle connection, and nothing in hyper bounds
//! a request body or a response write once the head is read (tower-http's body timeout is reset
//! by every frame, so a body sent a byte at a time never ends it); these timers do all three:
//!
//! - the header: from a request's first byte to its last header byte;
//! - the body: from the end of the head to the body's last byte, whatever its pace;
//! - the response: its bytes must leave at a minimum average rate after a grace period (as
//!   Kestrel's `MinResponseDataRate`), counted at the socket from the first write that found the
//!   output flushed, so a large registry sent to a fast client is never cut and a client that
//!   reads a byte now and then is.
//!
//! A connection waiting on its client (idle, sending a header or a body, or not taking its
//! response) can be closed to make room for another; one the server is working on cannot.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
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
    /// From the end of a request's head to the last byte of its body.
    pub(crate) body_read: Duration,
    /// How a response must leave: its bytes at this average rate after the grace period.
    pub(crate) send: SendRate,
}

/// The least a client must take of a response: `bytes_per_second` on average, after `grace`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SendRate {
    pub(crate) bytes_per_second: u64,
    pub(crate) grace: Duration,
}

impl SendRate {
    /// When the bytes sent so far must have been sent by, for a write phase begun at `since_ms`.
    fn deadline_ms(&self, since_ms: u64, sent: u64) -> u64 {
        let grace = u64::try_from(self.grace.as_millis()).unwrap_or(u64::MAX);
        let earned = sent.saturating_mul(1000) / self.bytes_per_second.max(1);
        since_ms.saturating_add(grace).saturating_add(earned)
    }
}

/// A moment on the connection's clock, stored plus one so that 0 means "none".
#[derive(Debug, Default)]
struct Mark(AtomicU64);

impl Mark {
    fn get(&self) -> Option<u64> {
        self.0.load(Ordering::Relaxed).checked_sub(1)
    }

    fn set(&self, ms: u64) {
        self.0.store(ms.saturating_add(1), Ordering::Relaxed);
    }

    /// Sets the mark unless it is set; true when it was not.
    fn start(&self, ms: u64) -> bool {
        self.0
            .compare_exchange(
                0,
                ms.saturating_add(1),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    fn clear(&self) {
        self.0.store(0, Ordering::Relaxed);
    }
}

/// What the accept loop and a connection's task know of the connection.
#[derive(Debug)]
pub(crate) struct Activity {
    base: Instant,
    requests: AtomicUsize,
    /// Milliseconds since `base` at which the connection last fell idle.
    idle_since_ms: AtomicU64,
    /// The first byte of a request whose header is not complete yet.
    head_started: Mark,
    /// The end of the head of a request whose body is still arriving.
    body_since: Mark,
    /// The first write since the output was last flushed: a response is leaving.
    send_since: Mark,
    /// Bytes written since `send_since`.
    sent: AtomicU64,
    /// Since when writes have found the socket full without any progress.
    blocked_since: Mark,
    /// Set when the connection is closed with a response still leaving: the socket is then
    /// reset, so what the kernel still holds for the client is dropped at once.
    reset_on_close: AtomicBool,
    /// Woken when the accept loop takes the connection's place.
    pub(crate) evicted: Notify,
    /// Woken when a request's first bytes arrive or a response begins to leave, which brings
    /// the connection's deadline in.
    pub(crate) timer_changed: Notify,
}

impl Activity {
    /// A connection accepted now; `base` is the accept loop's clock origin.
    pub(crate) fn new(base: Instant) -> Self {
        let activity = Self {
            base,
            requests: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(0),
            head_started: Mark::default(),
            body_since: Mark::default(),
            send_since: Mark::default(),
            sent: AtomicU64::new(0),
            blocked_since: Mark::default(),
            reset_on_close: AtomicBool::new(false),
            evicted: Notify::new(),
            timer_changed: Notify::new(),
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

    /// Whether no request is being answered and no response is leaving.
    pub(crate) fn is_quiet(&self) -> bool {
        self.is_idle() && self.send_since.get().is_none()
    }

    /// Marks the connection, about to be closed, to be reset if a response is still leaving.
    pub(crate) fn closing(&self) {
        if self.send_since.get().is_some() {
            self.reset_on_close.store(true, Ordering::Relaxed);
        }
    }

    /// A request's header is complete: the connection is busy until the returned guard drops.
    pub(crate) fn begin(self: &Arc<Self>) -> Busy {
        self.requests.fetch_add(1, Ordering::AcqRel);
        self.head_started.clear();
        Busy(self.clone())
    }

    /// Wraps a request's body, which keeps the body timer running until it is complete.
    pub(crate) fn receive(self: &Arc<Self>, body: Incoming) -> Received {
        if !http_body::Body::is_end_stream(&body) {
            self.body_since.set(self.now_ms());
        }
        Received {
            body,
            activity: self.clone(),
        }
    }

    fn read_some(&self) {
        if self.is_idle() && self.head_started.start(self.now_ms()) {
            self.timer_changed.notify_one();
        }
    }

    fn writing(&self) {
        if self.send_since.start(self.now_ms()) {
            self.sent.store(0, Ordering::Relaxed);
            self.timer_changed.notify_one();
        }
    }

    fn wrote(&self, bytes: usize) {
        self.sent.fetch_add(bytes as u64, Ordering::Relaxed);
        self.blocked_since.clear();
    }

    fn blocked(&self) {
        self.blocked_since.start(self.now_ms());
    }

    fn flushed(&self) {
        if self.send_since.get().is_some() {
            self.send_since.clear();
            self.blocked_since.clear();
            // The end of a response is where the idle time of a connection begins.
            if self.is_idle() {
                self.idle_since_ms.store(self.now_ms(), Ordering::Relaxed);
            }
        }
    }

    /// Since when the connection has been waiting on its client, if it is: idle (or sending a
    /// header), sending a request's body, or not taking a response. Such a connection may be
    /// closed to make room; the one waiting longest goes first.
    pub(crate) fn waiting_since_ms(&self) -> Option<u64> {
        if let Some(blocked) = self.blocked_since.get() {
            return Some(blocked);
        }
        if self.is_idle() {
            // A response still leaving is not waiting unless its writes are blocked.
            return self
                .send_since
                .get()
                .is_none()
                .then(|| self.idle_since_ms.load(Ordering::Relaxed));
        }
        self.body_since.get()
    }

    /// When the connection's current timeout ends, if it has one now: a connection whose
    /// request the server is working on has none (it is checked again later).
    pub(crate) fn deadline(&self, timeouts: Timeouts) -> Option<Instant> {
        let sending = self.send_since.get().map(|since| {
            timeouts
                .send
                .deadline_ms(since, self.sent.load(Ordering::Relaxed))
        });
        let receiving = if self.is_idle() {
            match (self.head_started.get(), sending) {
                (Some(head), _) => Some(head.saturating_add(ms(timeouts.header_read))),
                // A response still leaving is timed by its rate, not as idle time.
                (None, Some(_)) => None,
                (None, None) => Some(
                    self.idle_since_ms
                        .load(Ordering::Relaxed)
                        .saturating_add(ms(timeouts.idle)),
                ),
            }
        } else {
            self.body_since
                .get()
                .map(|since| since.saturating_add(ms(timeouts.body_read)))
        };
        let earliest = match (sending, receiving) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(self.base + Duration::from_millis(earliest))
    }
}

fn ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A request being answered; dropped when hyper has taken its response body.
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

/// The accepted socket, reporting the first bytes of each request's header and every write.
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

    /// Reports a write's outcome.
    fn wrote(&self, polled: &Poll<io::Result<usize>>) {
        match polled {
            Poll::Ready(Ok(n)) if *n > 0 => self.activity.wrote(*n),
            Poll::Pending => self.activity.blocked(),
            Poll::Ready(_) => {}
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if self.activity.reset_on_close.load(Ordering::Relaxed) {
            let _ = self.stream.set_zero_linger();
        }
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
        self.activity.writing();
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.wrote(&polled);
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.activity.writing();
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.wrote(&polled);
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.stream).poll_flush(cx);
        if matches!(polled, Poll::Ready(Ok(()))) {
            self.activity.flushed();
        }
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A request's body, which ends its connection's body timer once complete (or dropped).
#[derive(Debug)]
pub(crate) struct Received {
    body: Incoming,
    activity: Arc<Activity>,
}

impl http_body::Body for Received {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        let ended = match &polled {
            Poll::Ready(Some(Ok(_))) => self.body.is_end_stream(),
            Poll::Ready(_) => true,
            Poll::Pending => false,
        };
        if ended {
            self.activity.body_since.clear();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Received {
    fn drop(&mut self) {
        self.activity.body_since.clear();
    }
}

/// A response body that keeps its connection busy until hyper has taken it.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn timeouts() -> Timeouts {
        Timeouts {
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            body_read: Duration::from_secs(5),
            send: SendRate {
                bytes_per_second: 1000,
                grace: Duration::from_secs(2),
            },
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_response_leaving_too_slowly_runs_out_of_time_and_may_make_room() {
        let activity = Activity::new(Instant::now());
        let start = Instant::now();
        activity.writing();
        activity.wrote(3000);
        // 3,000 bytes at 1,000 a second, after 2 s of grace: due by 5 s.
        assert_eq!(
            activity.deadline(timeouts()),
            Some(start + Duration::from_secs(5))
        );
        assert_eq!(activity.waiting_since_ms(), None, "leaving, not waiting");
        activity.blocked();
        assert!(activity.waiting_since_ms().is_some(), "blocked: waiting");
        activity.wrote(1000);
        assert_eq!(activity.waiting_since_ms(), None);
        activity.flushed();
        assert_eq!(
            activity.deadline(timeouts()),
            Some(start + Duration::from_secs(60)),
            "idle once flushed"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_has_its_own_deadline_and_waits_on_the_client() {
        let activity = Arc::new(Activity::new(Instant::now()));
        let start = Instant::now();
        let _busy = activity.begin();
        assert_eq!(activity.deadline(timeouts()), None, "working on it");
        assert_eq!(activity.waiting_since_ms(), None);
        activity.body_since.set(0);
        assert_eq!(
            activity.deadline(timeouts()),
            Some(start + Duration::from_secs(5))
        );
        assert_eq!(activity.waiting_since_ms(), Some(0));
    }
}
