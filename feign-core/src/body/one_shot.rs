//! The shared state of a streamed body: read by one attempt at a time, watched by the pipeline
//! (has anything gone out? did the stream fail? when did it last move?).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use tokio::time::Instant;

use super::stream::{BodyStream, Chunks};
use super::RequestBody;
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

/// The stream and the attempt allowed to read it, under one lock: handing the body to a new
/// attempt and an earlier attempt's transport reading it cannot interleave.
struct Guarded {
    state: State,
    /// The attempt whose body may read the stream; an earlier one's reads fail.
    attempt: u32,
}

/// One streamed body, shared between the call (which watches it) and the attempt's
/// [`RequestBody`](super::RequestBody) (which reads it).
pub(crate) struct OneShot {
    guarded: Mutex<Guarded>,
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
            guarded: Mutex::new(Guarded {
                state: State::Open(body.chunks),
                attempt: 0,
            }),
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

    /// The body of the next attempt, which alone may read the stream from now on; `None` once a
    /// transport has started to read it.
    pub(crate) fn next_attempt(self: &Arc<Self>) -> Option<RequestBody> {
        let mut guarded = lock(&self.guarded);
        if self.started() {
            return None;
        }
        guarded.attempt += 1;
        Some(RequestBody::shared(self.clone(), guarded.attempt))
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

    /// The next chunk for attempt `attempt`'s transport.
    pub(crate) fn poll_chunk(
        &self,
        attempt: u32,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, BoxError>>> {
        let mut guarded = lock(&self.guarded);
        if guarded.attempt != attempt {
            return Poll::Ready(Some(Err(
                "a later attempt took over this streamed request body".into(),
            )));
        }
        self.started.store(true, Ordering::Release);
        let state = &mut guarded.state;
        let chunks = match state {
            State::Open(chunks) => chunks,
            State::Done => return Poll::Ready(None),
            State::Spent => {
                return Poll::Ready(Some(Err(
                    "a streamed request body can be sent only once".into()
                )))
            }
        };
        let next = std::task::ready!(chunks.as_mut().poll_next(cx));
        let state = &mut guarded.state;
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
        matches!(lock(&self.guarded).state, State::Done)
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

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    fn shared() -> Arc<OneShot> {
        let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from("ab"))]);
        Arc::new(OneShot::new(BodyStream::new(chunks)))
    }

    #[tokio::test]
    async fn only_the_latest_attempt_reads_and_none_follows_once_it_has() {
        let stream = shared();
        let mut first = stream.next_attempt().unwrap();
        let mut second = stream.next_attempt().unwrap();
        let refused = first.frame().await.unwrap().unwrap_err();
        assert!(refused.to_string().contains("later attempt"), "{refused}");
        assert!(!stream.started(), "a refused read takes nothing");
        let data = second.frame().await.unwrap().unwrap().into_data().unwrap();
        assert_eq!(data, "ab");
        assert!(stream.started() && stream.sent() == 2);
        assert!(stream.next_attempt().is_none());
        assert!(second.frame().await.is_none());
        assert!(stream.is_done());
    }

    #[tokio::test]
    async fn a_failing_stream_records_why() {
        let chunks = futures_util::stream::iter([Err::<Bytes, _>(std::io::Error::other("gone"))]);
        let stream = Arc::new(OneShot::new(BodyStream::new(chunks)));
        let mut body = stream.next_attempt().unwrap();
        assert!(body.frame().await.unwrap().is_err());
        assert_eq!(stream.failure().as_deref(), Some("gone"));
        let again = body.frame().await.unwrap().unwrap_err();
        assert!(again.to_string().contains("only once"), "{again}");
    }
}
