//! Reading a response body within the size limit and read timeout.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::FutureExt as _;
use http::header::CONTENT_LENGTH;
use http::HeaderMap;
use http_body::Frame;
use http_body_util::BodyExt;
use tokio::time::error::Elapsed;

use crate::client::ResponseBody;
use crate::error::BoxError;
use crate::Error;

/// What to do with a body over the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OverLimit {
    /// Fail (success bodies: a partial body must never look like a whole one).
    Fail,
    /// Keep the first `limit` bytes (error bodies, of which only a preview is kept anyway).
    Truncate,
}

/// Reads `body` in full. Over the limit, reading stops and `body` is dropped unfinished, so
/// its connection is closed rather than reused.
pub(crate) async fn read(
    mut body: ResponseBody,
    headers: &HeaderMap,
    limit: usize,
    over_limit: OverLimit,
    read_timeout: Duration,
) -> Result<Bytes, Error> {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if over_limit == OverLimit::Fail && declared.is_some_and(|len| len > limit as u64) {
        return Err(Error::response_too_large(limit));
    }
    let mut first: Option<Bytes> = None;
    let mut rest = BytesMut::new();
    let mut total = 0usize;
    loop {
        let frame = match next_frame(&mut body, read_timeout).await {
            Err(_) => {
                return Err(Error::timeout(format!(
                    "response body stalled for {read_timeout:?}"
                )))
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                return Err(
                    Error::body_error("response body truncated or unreadable").with_source(e)
                )
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(mut data) = frame.into_data() else {
            continue;
        };
        if data.len() > limit - total {
            match over_limit {
                OverLimit::Fail => return Err(Error::response_too_large(limit)),
                OverLimit::Truncate => {
                    data.truncate(limit - total);
                    append(&mut first, &mut rest, data);
                    break;
                }
            }
        }
        total += data.len();
        append(&mut first, &mut rest, data);
    }
    Ok(match first {
        Some(only) if rest.is_empty() => only,
        Some(_) => rest.freeze(),
        None => Bytes::new(),
    })
}

/// Keeps a single chunk without copying; copies once a second one arrives.
/// The body's next frame, or `Err` when none came within `read_timeout`. A frame already
/// buffered is taken without arming a timer, which most small bodies are.
async fn next_frame(
    body: &mut ResponseBody,
    read_timeout: Duration,
) -> Result<Option<Result<Frame<Bytes>, BoxError>>, Elapsed> {
    if let Some(ready) = body.frame().now_or_never() {
        return Ok(ready);
    }
    tokio::time::timeout(read_timeout, body.frame()).await
}

fn append(first: &mut Option<Bytes>, rest: &mut BytesMut, data: Bytes) {
    if data.is_empty() {
        return;
    }
    match first {
        None => *first = Some(data),
        Some(head) => {
            if rest.is_empty() {
                rest.extend_from_slice(head);
            }
            rest.extend_from_slice(&data);
        }
    }
}
