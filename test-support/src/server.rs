//! HTTP servers on 127.0.0.1 that record what they receive.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The request method.
    pub method: Method,
    /// The request target exactly as sent: path and query, still percent-encoded.
    pub target: String,
    /// The path as sent, still percent-encoded.
    pub path: String,
    /// The query as sent, still percent-encoded.
    pub query: Option<String>,
    /// Every header received.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
    /// When it arrived, on tokio's clock: virtual time in tests that pause it.
    pub at: tokio::time::Instant,
}

impl Recorded {
    fn new(parts: &http::request::Parts, body: Bytes) -> Recorded {
        let uri = &parts.uri;
        Recorded {
            method: parts.method.clone(),
            target: uri
                .path_and_query()
                .map(|p| p.as_str().to_owned())
                .unwrap_or_default(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            headers: parts.headers.clone(),
            body,
            at: tokio::time::Instant::now(),
        }
    }

    /// Whether this is a `method` request whose path starts with `path_prefix`.
    pub fn is(&self, method: &str, path_prefix: &str) -> bool {
        self.method == method && self.path.starts_with(path_prefix)
    }

    /// The query pairs, decoded the way servers decode them.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        serde_urlencoded::from_str(self.query.as_deref().unwrap_or(""))
            .expect("a well-formed query")
    }

    /// The decoded value of the first query parameter `name`, if any.
    pub fn query_value(&self, name: &str) -> Option<String> {
        self.query_pairs()
            .into_iter()
            .find_map(|(key, value)| (key == name).then_some(value))
    }

    /// The one value of header `name`, which must be valid UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .map(|value| value.to_str().expect("a UTF-8 header value"))
    }
}

/// Every request a recording server received, oldest first. Clones share the list.
#[derive(Clone, Debug, Default)]
pub struct Recorder(Arc<Mutex<Vec<Recorded>>>);

impl Recorder {
    fn push(&self, recorded: Recorded) {
        self.0.lock().expect("recorder lock").push(recorded);
    }

    /// Reads `body` whole, records the request and returns it.
    pub(crate) async fn record(&self, parts: &http::request::Parts, body: Incoming) -> Recorded {
        let body = body
            .collect()
            .await
            .map(|c| c.to_bytes())
            .unwrap_or_default();
        let recorded = Recorded::new(parts, body);
        self.push(recorded.clone());
        recorded
    }

    /// Every request received so far.
    pub fn all(&self) -> Vec<Recorded> {
        self.0.lock().expect("recorder lock").clone()
    }

    /// How many requests were received.
    pub fn len(&self) -> usize {
        self.0.lock().expect("recorder lock").len()
    }

    /// Whether no request was received.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The only request received; fails the test if there were none or several.
    pub fn only(&self) -> Recorded {
        let all = self.all();
        assert_eq!(all.len(), 1, "expected exactly one request, got {all:#?}");
        all.into_iter().next().expect("one request")
    }

    /// Forgets every request received so far.
    pub fn clear(&self) {
        self.0.lock().expect("recorder lock").clear();
    }
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
/// URL and what it records. Bodies above 1 MiB are answered 413.
pub async fn recording_server<F, R>(respond: F) -> (String, Recorder)
where
    F: Fn(&Recorded) -> R + Clone + Send + Sync + 'static,
    R: IntoResponse,
{
    let recorder = Recorder::default();
    let kept = recorder.clone();
    let handler = move |request: Request| {
        let kept = kept.clone();
        let respond = respond.clone();
        async move {
            let (parts, body) = request.into_parts();
            let Ok(body) = axum::body::to_bytes(body, 1 << 20).await else {
                return StatusCode::PAYLOAD_TOO_LARGE.into_response();
            };
            let recorded = Recorded::new(&parts, body);
            kept.push(recorded.clone());
            respond(&recorded).into_response()
        }
    };
    let base = serve(Router::new().fallback(handler)).await;
    (base, recorder)
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
                        let body = reqs.record(&parts, body).await.body;
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
