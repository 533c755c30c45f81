//! `BodyStream`: a one-shot request body from any stream of byte chunks.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::stream::{self, Stream, StreamExt};

use crate::error::BoxError;

/// The boxed stream inside a [`BodyStream`].
pub(crate) type Chunks = Pin<Box<dyn Stream<Item = Result<Bytes, BoxError>> + Send>>;

/// A request body read from a stream of byte chunks, sent as the transport reads it, without
/// buffering: chunked, or with `Content-Length` when the length is known
/// ([`BodyStream::sized`], files).
///
/// A stream can be read once, so a call whose streamed body has started to go out is never
/// retried (see the README's "Streaming uploads and multipart"). An error from the stream ends
/// the request: the server sees an incomplete body, and the call fails with that error as its
/// source.
///
/// ```
/// use feign_core::{BodyStream, Bytes};
///
/// let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from("a,b\n"))]);
/// let body = BodyStream::sized(chunks, 4);
/// assert_eq!(body.length(), Some(4));
/// ```
pub struct BodyStream {
    pub(crate) chunks: Chunks,
    pub(crate) length: Option<u64>,
}

impl BodyStream {
    /// A body of unknown length, sent chunked.
    pub fn new<S, E>(stream: S) -> BodyStream
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        BodyStream {
            chunks: Box::pin(stream.map(|chunk| chunk.map_err(Into::into))),
            length: None,
        }
    }

    /// A body of exactly `length` bytes, sent with `Content-Length`. A stream that yields more
    /// or ends short fails the call rather than send a body that disagrees with its header.
    pub fn sized<S, E>(stream: S, length: u64) -> BodyStream
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        let checked = Checked {
            inner: BodyStream::new(stream).chunks,
            declared: length,
            seen: 0,
            done: false,
        };
        BodyStream {
            chunks: Box::pin(checked),
            length: Some(length),
        }
    }

    /// The length, when known.
    pub fn length(&self) -> Option<u64> {
        self.length
    }

    /// What a fallback gets in place of a stream its failed call consumed: a body that fails
    /// when read, saying so.
    pub(crate) fn spent() -> BodyStream {
        BodyStream::new(stream::once(async {
            Err::<Bytes, BoxError>(
                "this body stream was consumed by the call a fallback stands in for".into(),
            )
        }))
    }
}

/// The chunks, for code that is handed a `BodyStream` (a fallback, a custom transport).
impl Stream for BodyStream {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.chunks.as_mut().poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.chunks.size_hint()
    }
}

impl fmt::Debug for BodyStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BodyStream")
            .field("length", &self.length)
            .finish_non_exhaustive()
    }
}

/// A stream held to its declared length.
struct Checked {
    inner: Chunks,
    declared: u64,
    seen: u64,
    done: bool,
}

impl Stream for Checked {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        let item = std::task::ready!(self.inner.as_mut().poll_next(cx));
        let (declared, seen) = (self.declared, self.seen);
        let checked = match item {
            Some(Ok(chunk)) => {
                let seen = seen.saturating_add(chunk.len() as u64);
                self.seen = seen;
                if seen > declared {
                    Some(Err(format!(
                        "body stream yielded more than its declared {declared} bytes"
                    )
                    .into()))
                } else {
                    Some(Ok(chunk))
                }
            }
            None if seen < declared => Some(Err(format!(
                "body stream ended after {seen} of its declared {declared} bytes"
            )
            .into())),
            other => other,
        };
        if !matches!(checked, Some(Ok(_))) {
            self.done = true;
        }
        Poll::Ready(checked)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}
