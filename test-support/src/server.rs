//! HTTP servers on 127.0.0.1 that record what they receive: feign-test's `RecordingServer` and
//! its records, and a recording server in front of an axum router, for routers that stream.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Router;
use feign_test::{Matcher, RecordingServer, Reply};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// One request as the server received it: feign-test's record, whose `Debug` hides secrets.
pub use feign_test::RecordedRequest as Recorded;

/// Every request a recording server received, oldest first. Clones share the list.
pub use feign_test::Recording as Recorder;

/// Reads `body` whole, records the request in `recorder` and returns it.
pub(crate) async fn record(
    recorder: &Recorder,
    parts: &http::request::Parts,
    body: Incoming,
) -> Recorded {
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let recorded = Recorded::from_parts(parts, body);
    recorder.push(recorded.clone());
    recorded
}

/// Serves `router` on a fresh loopback port and returns its base URL, `http://127.0.0.1:port`.
pub async fn serve(router: Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, router).await.expect("serve");
    });
    format!("http://{address}")
}

/// Starts a server that records each request and answers it with `respond`; returns its base
/// URL and what it records. The server is feign-test's, running until the test's runtime ends.
pub async fn recording_server<F, R>(respond: F) -> (String, Recorder)
where
    F: Fn(&Recorded) -> R + Clone + Send + Sync + 'static,
    R: IntoResponse,
{
    let server = RecordingServer::start().await;
    server
        .on(Matcher::any())
        .respond_with_async(move |request| {
            let response = respond(&request).into_response();
            async move {
                let (parts, body) = response.into_parts();
                match axum::body::to_bytes(body, usize::MAX).await {
                    Ok(body) => Reply::from_http(http::Response::from_parts(parts, body)),
                    Err(e) => Reply::status(500).text(format!("the response body failed: {e}")),
                }
            }
        });
    let (url, recorder) = (server.url(), server.recording());
    server.detach();
    (url, recorder)
}

/// Answers every request with 200 and an empty body: a `respond` for [`recording_server`].
pub fn ok(_: &Recorded) -> Response {
    StatusCode::OK.into_response()
}

/// An HTTP/1 server on 127.0.0.1 that counts connections and records every request, then hands
/// the request to an axum router.
#[derive(Debug)]
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    requests: Recorder,
}

impl Server {
    /// Starts serving `router` on a fresh loopback port.
    pub async fn start(router: Router) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Recorder::default();
        let (conns, reqs) = (connections.clone(), requests.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                conns.fetch_add(1, Ordering::SeqCst);
                let (router, reqs) = (router.clone(), reqs.clone());
                let service = hyper::service::service_fn(move |req: http::Request<Incoming>| {
                    let (router, reqs) = (router.clone(), reqs.clone());
                    async move {
                        let (parts, body) = req.into_parts();
                        let body = record(&reqs, &parts, body).await.body;
                        let response = router
                            .oneshot(http::Request::from_parts(
                                parts,
                                axum::body::Body::from(body),
                            ))
                            .await;
                        Ok::<_, Infallible>(response.unwrap_or_else(|never| match never {}))
                    }
                });
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Server {
            addr,
            connections,
            requests,
        }
    }

    /// The base URL, `http://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// How many connections were accepted.
    pub fn connection_count(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Every request received so far, oldest first.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.all()
    }

    /// How many requests were received.
    pub fn request_count(&self) -> usize {
        self.requests.len()
    }

    /// The target (path and query) of the last request, if any.
    pub fn last_target(&self) -> Option<String> {
        self.recorded().pop().map(|r| r.target)
    }

    /// The targets of every request, oldest first.
    pub fn targets(&self) -> Vec<String> {
        self.recorded().into_iter().map(|r| r.target).collect()
    }
}
