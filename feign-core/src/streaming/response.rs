//! [`StreamingResponse`]: status and headers at once, then the body as it arrives.

pub(crate) mod reader;

use std::fmt;
use std::future::Future as _;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::FusedStream;
use futures_util::Stream;
use http::header::CONTENT_LENGTH;
use http::{HeaderMap, StatusCode};
use http_body::Body as _;
use sync_wrapper::SyncWrapper;
use tokio::time::{Instant, Sleep};

use crate::client::ResponseBody;
use crate::Error;

use reader::StreamingReader;

/// An HTTP response whose body is not buffered: status and headers as soon as the head
/// arrives, then the body as a [`Stream`] of [`Bytes`] chunks (or a tokio
/// [`AsyncRead`](tokio::io::AsyncRead) through
/// [`into_async_read`](StreamingResponse::into_async_read)).
///
/// Declare a method returning `Result<StreamingResponse, Error>` (or
/// `Result<Option<StreamingResponse>, Error>`, where a 404 is `None`) to get one.
///
/// - **No size cap** by default: the client's `max_response_bytes` does not apply to a streamed
///   2xx body. [`with_limit`](StreamingResponse::with_limit) sets one; a body over it ends
///   the stream with an error (`is_too_large()`), never with a silent cut.
/// - **The read timeout applies between chunks**: when no data arrives for that long, the
///   stream yields a timeout error (`is_timeout()`). The call's total timeout, if any, bounds
///   the call only until the head arrives.
/// - **A body that breaks off** (the connection closed early, a bad chunk) yields an error
///   item (`is_body()`), never a clean end. After an error the stream ends.
/// - **The call's outcome is recorded when the head arrives**: metrics (duration and status),
///   the circuit breaker, the bulkhead slot and the load balancer's
///   [`CallObserver`](crate::resolve::CallObserver) see the call as finished then, by its status. An
///   error while streaming the body is the reader's to handle; it is not retried and not
///   counted against the instance.
/// - **A non-2xx response** still goes to the [`ErrorDecoder`](crate::ErrorDecoder), its body
///   buffered as for any call, and retries happen as for any call: only before the head is
///   returned.
///
/// Dropping the response before its end closes the connection rather than reusing it.
pub struct StreamingResponse {
    status: StatusCode,
    headers: HeaderMap,
    state: State,
    read_timeout: Duration,
    /// The between-chunks timer, made on the first wait and reset for later ones.
    stall: Option<Pin<Box<Sleep>>>,
    /// Whether `stall` runs for the current wait.
    waiting: bool,
    limit: Option<u64>,
    received: u64,
    method_key: Option<&'static str>,
}

enum State {
    /// The body, reached only through `&mut`, so the response is `Sync` though the body is not.
    Streaming(SyncWrapper<ResponseBody>),
    /// A body already read whole (a dismissed 404's), handed out as one chunk.
    Buffered(Bytes),
    /// An error to yield before the stream ends (a declared length over the limit).
    Failed(Error),
    Done,
}

impl StreamingResponse {
    /// A response over `body`, read with `read_timeout` between chunks.
    pub fn new(
        status: StatusCode,
        headers: HeaderMap,
        body: ResponseBody,
        read_timeout: Duration,
    ) -> StreamingResponse {
        let body = State::Streaming(SyncWrapper::new(body));
        StreamingResponse::with_state(status, headers, body, read_timeout)
    }

    /// A response whose body is `body`, already whole: what a fallback or a test double
    /// answers with, or a transport that buffered the body.
    pub fn from_bytes(status: StatusCode, headers: HeaderMap, body: Bytes) -> StreamingResponse {
        StreamingResponse::buffered(status, headers, body)
    }

    /// A response whose body was already read whole.
    pub(crate) fn buffered(status: StatusCode, headers: HeaderMap, body: Bytes) -> Self {
        StreamingResponse::with_state(status, headers, State::Buffered(body), Duration::MAX)
    }

    fn with_state(
        status: StatusCode,
        headers: HeaderMap,
        state: State,
        read_timeout: Duration,
    ) -> Self {
        StreamingResponse {
            status,
            headers,
            state,
            read_timeout,
            stall: None,
            waiting: false,
            limit: None,
            received: 0,
            method_key: None,
        }
    }

    /// This body under another head (the one layers left).
    pub(crate) fn with_head(mut self, status: StatusCode, headers: HeaderMap) -> Self {
        self.status = status;
        self.headers = headers;
        self
    }

    /// Names the method in the errors the stream yields.
    pub(crate) fn with_method_key(mut self, key: &'static str) -> Self {
        self.method_key = Some(key);
        self
    }

    /// The body in full as its buffered bytes, when it was read whole; else the response
    /// itself (not a failure: clippy's size lint for errors does not apply).
    #[allow(clippy::result_large_err)]
    pub(crate) fn into_buffered(self) -> Result<(StatusCode, HeaderMap, Bytes), Self> {
        match self.state {
            State::Buffered(body) => Ok((self.status, self.headers, body)),
            _ => Err(self),
        }
    }

    /// Caps the body at `bytes`: past it, the stream yields an error (`is_too_large()`) and
    /// ends. A declared `Content-Length` over the cap fails on the first poll, before any
    /// chunk. Default: no cap.
    #[must_use]
    pub fn with_limit(mut self, bytes: u64) -> StreamingResponse {
        self.limit = Some(bytes);
        if self
            .content_length()
            .is_some_and(|declared| declared > bytes)
        {
            self.state = State::Failed(self.too_large(bytes));
        }
        self
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The response headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The `Content-Length` the server declared, if any.
    pub fn content_length(&self) -> Option<u64> {
        self.headers
            .get(CONTENT_LENGTH)?
            .to_str()
            .ok()?
            .parse()
            .ok()
    }

    /// The body bytes handed out so far.
    pub fn bytes_received(&self) -> u64 {
        self.received
    }

    /// The body as a tokio [`AsyncRead`](tokio::io::AsyncRead) (and `AsyncBufRead`); the
    /// stream's errors become `std::io::Error`s carrying the [`Error`] (`TimedOut` for a
    /// stalled body).
    pub fn into_async_read(self) -> StreamingReader {
        StreamingReader::new(self)
    }

    /// Reads the rest of the body into memory, within the cap when one was set.
    pub async fn bytes(mut self) -> Result<Bytes, Error> {
        let mut all = bytes::BytesMut::new();
        while let Some(chunk) = futures_util::StreamExt::next(&mut self).await {
            all.extend_from_slice(&chunk?);
        }
        Ok(all.freeze())
    }

    fn too_large(&self, limit: u64) -> Error {
        self.name(Error::response_too_large(limit))
    }

    fn name(&self, error: Error) -> Error {
        match self.method_key {
            Some(key) => error.with_method_key(key),
            None => error,
        }
    }

    /// Ends the stream with `error`.
    fn fail(&mut self, error: Error) -> Poll<Option<Result<Bytes, Error>>> {
        self.state = State::Done;
        Poll::Ready(Some(Err(self.name(error))))
    }

    /// Hands out `data`, or fails when it takes the body over the cap.
    fn chunk(&mut self, data: Bytes) -> Poll<Option<Result<Bytes, Error>>> {
        let total = self.received + data.len() as u64;
        if let Some(limit) = self.limit.filter(|&limit| total > limit) {
            let error = self.too_large(limit);
            return self.fail(error);
        }
        self.received = total;
        Poll::Ready(Some(Ok(data)))
    }

    /// Nothing arrived: runs the between-chunks timer, `Ready` once it fired.
    fn poll_stall(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !self.waiting {
            self.waiting = true;
            let deadline = Instant::now()
                .checked_add(self.read_timeout)
                .unwrap_or_else(far_future);
            match &mut self.stall {
                Some(stall) => stall.as_mut().reset(deadline),
                None => self.stall = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
        }
        match &mut self.stall {
            Some(stall) => stall.as_mut().poll(cx),
            None => Poll::Pending,
        }
    }
}

/// About thirty years away: tokio's own stand-in for "never".
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86400 * 365 * 30)
}

impl Stream for StreamingResponse {
    type Item = Result<Bytes, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            let body = match &mut this.state {
                State::Streaming(body) => body,
                State::Done => return Poll::Ready(None),
                _ => match std::mem::replace(&mut this.state, State::Done) {
                    State::Buffered(data) if !data.is_empty() => return this.chunk(data),
                    State::Failed(error) => return this.fail(error),
                    _ => return Poll::Ready(None),
                },
            };
            match Pin::new(body.get_mut()).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => {
                    this.waiting = false;
                    match frame.into_data() {
                        Ok(data) if !data.is_empty() => return this.chunk(data),
                        // Empty data and trailers carry nothing to hand out.
                        _ => continue,
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    return this.fail(
                        Error::body_error("response body truncated or unreadable").with_source(e),
                    )
                }
                Poll::Ready(None) => {
                    this.state = State::Done;
                    return Poll::Ready(None);
                }
                Poll::Pending => {
                    ready!(this.poll_stall(cx));
                    let timeout = this.read_timeout;
                    return this.fail(Error::timeout(format!(
                        "response body stalled for {timeout:?}"
                    )));
                }
            }
        }
    }
}

impl FusedStream for StreamingResponse {
    fn is_terminated(&self) -> bool {
        matches!(self.state, State::Done)
    }
}

impl fmt::Debug for StreamingResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamingResponse")
            .field("status", &self.status)
            .field("headers", &crate::redact::headers(&self.headers))
            .field("bytes_received", &self.received)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;
    use http_body::Frame;
    use http_body_util::{BodyExt, StreamBody};
    use tokio::sync::mpsc;

    use super::*;
    use crate::error::BoxError;

    type Sender = mpsc::UnboundedSender<Result<Frame<Bytes>, BoxError>>;

    /// A response over a body the test feeds frame by frame.
    fn fed(headers: HeaderMap, read_timeout: Duration) -> (StreamingResponse, Sender) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let frames = futures_util::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.map(|frame| (frame, receiver))
        });
        let body = StreamBody::new(frames).boxed_unsync();
        let response = StreamingResponse::new(StatusCode::OK, headers, body, read_timeout);
        (response, sender)
    }

    fn data(text: &'static str) -> Result<Frame<Bytes>, BoxError> {
        Ok(Frame::data(Bytes::from_static(text.as_bytes())))
    }

    #[tokio::test(start_paused = true)]
    async fn the_read_timeout_runs_between_chunks_not_over_the_body() {
        let (mut response, sender) = fed(HeaderMap::new(), Duration::from_secs(5));
        for _ in 0..3 {
            let sender = sender.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(4)).await;
                sender.send(data("tick")).unwrap();
            });
            assert_eq!(response.next().await.unwrap().unwrap(), "tick");
        }
        let waited = Instant::now();
        let error = response.next().await.unwrap().unwrap_err();
        assert!(error.is_timeout(), "{error:?}");
        assert_eq!(waited.elapsed(), Duration::from_secs(5));
        assert!(response.next().await.is_none() && response.is_terminated());
        drop(sender);
    }

    #[tokio::test]
    async fn the_cap_counts_every_chunk_and_ends_with_an_error() {
        let (response, sender) = fed(HeaderMap::new(), Duration::from_secs(5));
        let mut response = response.with_limit(7).with_method_key("Files#get");
        for text in ["abc", "def", "gh", "never"] {
            sender.send(data(text)).unwrap();
        }
        sender.send(Ok(Frame::trailers(HeaderMap::new()))).unwrap();
        assert_eq!(response.next().await.unwrap().unwrap(), "abc");
        assert_eq!(response.next().await.unwrap().unwrap(), "def");
        let error = response.next().await.unwrap().unwrap_err();
        assert!(error.is_too_large() && error.method_key() == Some("Files#get"));
        assert!(response.next().await.is_none());
        assert_eq!(response.bytes_received(), 6);
    }

    #[tokio::test]
    async fn trailers_and_empty_chunks_are_skipped_and_a_declared_length_checked() {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_LENGTH, "3".parse().unwrap());
        let (response, sender) = fed(headers.clone(), Duration::from_secs(5));
        for frame in [data(""), data("abc"), Ok(Frame::trailers(HeaderMap::new()))] {
            sender.send(frame).unwrap();
        }
        drop(sender);
        assert_eq!(response.with_limit(3).bytes().await.unwrap(), "abc");
        let (response, _sender) = fed(headers, Duration::from_secs(5));
        assert!(response
            .with_limit(2)
            .bytes()
            .await
            .unwrap_err()
            .is_too_large());
    }

    #[test]
    fn responses_and_readers_can_be_shared_across_threads() {
        fn send_sync<T: Send + Sync + Unpin>() {}
        send_sync::<StreamingResponse>();
        send_sync::<StreamingReader>();
    }

    #[tokio::test]
    async fn a_buffered_body_is_one_chunk_and_comes_back_whole() {
        let mut response =
            StreamingResponse::buffered(StatusCode::NOT_FOUND, HeaderMap::new(), "gone".into());
        assert_eq!(response.next().await.unwrap().unwrap(), "gone");
        assert!(response.next().await.is_none());
        let buffered =
            StreamingResponse::buffered(StatusCode::NOT_FOUND, HeaderMap::new(), "gone".into());
        let (status, _, body) = buffered.into_buffered().unwrap();
        assert_eq!((status, &body[..]), (StatusCode::NOT_FOUND, &b"gone"[..]));
        let (streaming, _sender) = fed(HeaderMap::new(), Duration::from_secs(1));
        assert!(streaming.into_buffered().is_err());
    }
}
