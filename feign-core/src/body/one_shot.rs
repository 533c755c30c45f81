//! The shared state of a streamed body: taken by the first attempt that reads it, watched by
//! the pipeline (has anything gone out? did the stream fail? when did it last move?).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;

use super::stream::{BodyStream, Chunks};
use crate::error::BoxError;

/// Where the stream is.
enum State {
    /// Not finished: unread, or partly read.
    Open(Chunks),
    /// Read to its end.
    Done,
    /// Failed, or given up by a transport: it cannot be read again.
    Spent,
}

/// One streamed body, shared between the call (which watches it) and the attempt's
/// [`RequestBody`](super::RequestBody) (which reads it).
pub(crate) struct OneShot {
    state: Mutex<State>,
    length: Option<u64>,
    started: AtomicBool,
    sent: AtomicU64,
    origin: Instant,
    /// Nanoseconds after `origin` of the last chunk handed to the transport.
    progress: AtomicU64,
    failure: Mutex<Option<String>>,
}

impl OneShot {
    pub(crate) fn new(body: BodyStream) -> OneShot {
        OneShot {
            state: Mutex::new(State::Open(body.chunks)),
            length: body.length,
            started: AtomicBool::new(false),
            sent: AtomicU64::new(0),
            origin: Instant::now(),
            progress: AtomicU64::new(0),
            failure: Mutex::new(None),
        }
    }

    pub(crate) fn length(&self) -> Option<u64> {
        self.length
    }

    /// Whether a transport has started to read the body: bytes may have left, so it cannot be
    /// sent again.
    pub(crate) fn started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// How many bytes the transport has taken.
    pub(crate) fn sent(&self) -> u64 {
        self.sent.load(Ordering::Acquire)
    }

    /// Why the stream failed, when it did.
    pub(crate) fn failure(&self) -> Option<String> {
        lock(&self.failure).clone()
    }

    /// When the transport last took a chunk (or the body was made, before the first).
    pub(crate) fn last_progress(&self) -> Instant {
        self.origin + Duration::from_nanos(self.progress.load(Ordering::Acquire))
    }

    /// The next chunk for the transport.
    pub(crate) fn poll_chunk(&self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BoxError>>> {
        self.started.store(true, Ordering::Release);
        let mut state = lock(&self.state);
        let chunks = match &mut *state {
            State::Open(chunks) => chunks,
            State::Done => return Poll::Ready(None),
            State::Spent => {
                return Poll::Ready(Some(Err(
                    "a streamed request body can be sent only once".into()
                )))
            }
        };
        let next = std::task::ready!(chunks.as_mut().poll_next(cx));
        match next {
            Some(Ok(chunk)) => {
                self.sent.fetch_add(chunk.len() as u64, Ordering::AcqRel);
                let nanos = u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
                self.progress.store(nanos, Ordering::Release);
                Poll::Ready(Some(Ok(chunk)))
            }
            Some(Err(error)) => {
                *state = State::Spent;
                *lock(&self.failure) = Some(error_chain(&*error));
                Poll::Ready(Some(Err(error)))
            }
            None => {
                *state = State::Done;
                Poll::Ready(None)
            }
        }
    }

    /// Whether the stream has been read to its end.
    pub(crate) fn is_done(&self) -> bool {
        matches!(*lock(&self.state), State::Done)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An error and its sources, as one line.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}
