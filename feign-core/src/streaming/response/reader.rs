//! A streaming body as a tokio `AsyncRead`.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;
use tokio::io::{AsyncBufRead, AsyncRead, ReadBuf};
use tokio_util::io::StreamReader;

use super::StreamingResponse;

/// The body of a [`StreamingResponse`] as an [`AsyncRead`] and [`AsyncBufRead`], made by
/// [`StreamingResponse::into_async_read`]. A stream error becomes an [`io::Error`] whose inner
/// error is the [`crate::Error`] (kind `TimedOut` for a stalled body, `Other` otherwise).
pub struct StreamingReader {
    inner: StreamReader<IoErrors, Bytes>,
}

impl StreamingReader {
    pub(super) fn new(response: StreamingResponse) -> StreamingReader {
        StreamingReader {
            inner: StreamReader::new(IoErrors(response)),
        }
    }

    /// The response being read: status, headers and the bytes handed out so far.
    pub fn get_ref(&self) -> &StreamingResponse {
        &self.inner.get_ref().0
    }
}

/// The response's chunks with its errors as `io::Error`s, as `StreamReader` wants them.
struct IoErrors(StreamingResponse);

impl Stream for IoErrors {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.0).poll_next(cx).map(|item| {
            item.map(|chunk| {
                chunk.map_err(|error| {
                    let kind = if error.is_timeout() {
                        io::ErrorKind::TimedOut
                    } else {
                        io::ErrorKind::Other
                    };
                    io::Error::new(kind, error)
                })
            })
        })
    }
}

impl AsyncRead for StreamingReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncBufRead for StreamingReader {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        Pin::new(&mut self.get_mut().inner).poll_fill_buf(cx)
    }

    fn consume(mut self: Pin<&mut Self>, amt: usize) {
        Pin::new(&mut self.inner).consume(amt);
    }
}

impl fmt::Debug for StreamingReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StreamingReader")
            .field(self.get_ref())
            .finish()
    }
}
