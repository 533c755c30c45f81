//! The accept loop and each connection: HTTP/1 through hyper, until a reply is a fault and the
//! connection's socket is taken back to fail it.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use crate::reply::{Answer, Fault};
use crate::request::RecordedRequest;
use crate::state::State;

/// Accepts connections until `stop` fires (a sender dropped without sending leaves it running
/// until the runtime ends); then closes the listener and every connection before returning.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    state: Arc<State>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut connections = JoinSet::new();
    let mut detached = false;
    loop {
        tokio::select! {
            told = &mut stop, if !detached => match told {
                Ok(()) => break,
                Err(_) => detached = true,
            },
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    state.connection_accepted();
                    connections.spawn(serve(stream, state.clone()));
                }
                // Out of file descriptors, most likely: wait for some to be freed.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next() => {}
        }
    }
    drop(listener);
    connections.shutdown().await;
}

/// Serves one connection; when a reply is a [`Fault`], takes the socket back from hyper and
/// fails it that way.
async fn serve(stream: TcpStream, state: Arc<State>) {
    let (fail, mut failed) = mpsc::unbounded_channel::<Fault>();
    let service =
        hyper::service::service_fn(move |request| handle(state.clone(), fail.clone(), request));
    let mut connection =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    let fault = tokio::select! {
        _ = &mut connection => return,
        Some(fault) = failed.recv() => fault,
    };
    let stream = connection.into_parts().io.into_inner();
    fail_with(stream, fault).await;
}

/// Reads the request whole, records it and answers it, after the reply's delay. A fault is
/// handed to the connection, and this request never answered.
async fn handle(
    state: Arc<State>,
    fail: mpsc::UnboundedSender<Fault>,
    request: http::Request<Incoming>,
) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    // A body cut short is recorded as far as it arrived.
    let body = body
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    let reply = state
        .answer(RecordedRequest::from_parts(&parts, body))
        .await;
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    match reply.answer {
        Answer::Respond {
            status,
            headers,
            body,
        } => {
            let mut response = http::Response::new(Full::new(body));
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            Ok(response)
        }
        Answer::Fault(fault) => {
            if fault != Fault::Hang {
                let _ = fail.send(fault);
            }
            std::future::pending().await
        }
        // `State::answer` has already turned these into 500s with the reason.
        Answer::Invalid(_) => {
            let mut response = http::Response::new(Full::default());
            *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
            Ok(response)
        }
    }
}

/// Fails a connection whose request has been read.
async fn fail_with(mut stream: TcpStream, fault: Fault) {
    match fault {
        Fault::Reset => {
            // A zero linger makes the close an RST; it cannot block, having nothing to wait
            // for. (`set_zero_linger` is newer than the tokio this crate requires.)
            #[allow(deprecated)]
            let _ = stream.set_linger(Some(Duration::ZERO));
        }
        Fault::Raw(bytes) => {
            let _ = stream.write_all(&bytes).await;
            let _ = stream.shutdown().await;
        }
        Fault::CloseBeforeAnswer | Fault::Hang => {
            let _ = stream.shutdown().await;
        }
    }
}
