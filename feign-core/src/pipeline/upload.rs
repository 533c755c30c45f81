//! What a call does differently when its body is streamed: the read timeout counts from the
//! body's last chunk, and a failed stream or a cut-off upload is named in the call's error.

use std::future::Future;
use std::time::Duration;

use tokio::time::{error::Elapsed, Instant};

use crate::body::OneShot;
use crate::error::Kind;
use crate::Error;

/// Awaits `send` while the body keeps moving: it times out only when `read_timeout` passes
/// with neither a chunk taken by the transport nor the response head, so a large upload is
/// not cut off by a timeout meant for one read.
pub(super) async fn within_read_timeout<F: Future>(
    send: F,
    stream: &OneShot,
    read_timeout: Duration,
) -> Result<F::Output, Elapsed> {
    let mut send = std::pin::pin!(send);
    let mut deadline = Instant::now() + read_timeout;
    loop {
        match tokio::time::timeout_at(deadline, send.as_mut()).await {
            Ok(output) => return Ok(output),
            Err(elapsed) => {
                let moved = stream.last_progress() + read_timeout;
                if moved <= Instant::now() {
                    return Err(elapsed);
                }
                deadline = moved;
            }
        }
    }
}

/// The error of a call whose body stream failed, even when a response came.
pub(super) fn failed(stream: &OneShot) -> Option<Error> {
    stream.failure().map(|why| body_failed(stream, &why))
}

fn body_failed(stream: &OneShot, why: &str) -> Error {
    Error::new(
        Kind::Transport,
        format!(
            "the request body stream failed after {} bytes: {why}",
            stream.sent()
        ),
    )
}

/// A transport's `error`, said plainly when the streamed body is why it failed, or when the
/// connection broke while the body was going out (it is then not sent again).
pub(super) fn explain(stream: &OneShot, error: Error) -> Error {
    match stream.failure() {
        Some(why) => body_failed(stream, &why).with_source(error),
        None if error.is_transport() && stream.started() && !stream.is_done() => Error::new(
            Kind::Transport,
            format!(
                "the connection failed after {} bytes of the streamed request body; a streamed body is not sent again",
                stream.sent()
            ),
        )
        .with_source(error),
        None => error,
    }
}
