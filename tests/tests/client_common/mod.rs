//! Loopback servers for the `client_*` tests: an axum app on 127.0.0.1:0, and a recording server
//! that keeps every request exactly as it arrived.

#![allow(dead_code, unreachable_pub)]

use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use bytes::Bytes;

/// Serves `router` on a fresh loopback port and returns its base URL, `http://127.0.0.1:port`.
pub async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        axum::serve(listener, router).await.expect("serve");
    });
    format!("http://{address}")
}

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    /// The path as sent, still percent-encoded.
    pub path: String,
    /// The query as sent, still percent-encoded.
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Recorded {
    /// The query pairs, decoded the way servers decode them.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        serde_urlencoded::from_str(self.query.as_deref().unwrap_or(""))
            .expect("a well-formed query")
    }

    /// The one value of header `name`, which must be valid UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .map(|value| value.to_str().expect("a UTF-8 header value"))
    }
}

/// Every request the recording server received, oldest first.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<Recorded>>>);

impl Recorder {
    pub fn all(&self) -> Vec<Recorded> {
        self.0.lock().expect("recorder lock").clone()
    }

    /// The only request received; fails the test if there were none or several.
    pub fn only(&self) -> Recorded {
        let all = self.all();
        assert_eq!(all.len(), 1, "expected exactly one request, got {all:#?}");
        all.into_iter().next().expect("one request")
    }

    pub fn clear(&self) {
        self.0.lock().expect("recorder lock").clear();
    }
}

/// Starts a server that records each request and answers it with `respond`.
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
            let body = match axum::body::to_bytes(body, 1 << 20).await {
                Ok(body) => body,
                Err(_) => return StatusCode::PAYLOAD_TOO_LARGE.into_response(),
            };
            let recorded = Recorded {
                method: parts.method,
                path: parts.uri.path().to_owned(),
                query: parts.uri.query().map(str::to_owned),
                headers: parts.headers,
                body,
            };
            kept.0.lock().expect("recorder lock").push(recorded.clone());
            respond(&recorded).into_response()
        }
    };
    let base = serve(Router::new().fallback(handler)).await;
    (base, recorder)
}

/// Answers every request with 200 and an empty body.
pub fn ok(_: &Recorded) -> Response {
    StatusCode::OK.into_response()
}
