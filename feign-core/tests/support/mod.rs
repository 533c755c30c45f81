//! Shared test fixtures: a hand-written client shaped exactly like the code `#[feign_client]`
//! generates, a recording HTTP server on 127.0.0.1, and a raw TCP server writing exact bytes.

#![allow(dead_code, unreachable_pub)]

use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::Router;
use bytes::Bytes;
use feign_core::__private::{
    self, ClientMeta, Core, FromCore, HttpMethod, MethodMeta, MethodOptions, PathPart,
};
use feign_core::{Builder, Error, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tower::ServiceExt;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub id: u64,
    pub item: String,
}

#[derive(Debug, Serialize)]
pub struct NewOrder {
    pub item: String,
}

pub static CLIENT: ClientMeta = ClientMeta {
    trait_name: "OrderService",
    service: "order-service",
    url: Some("http://127.0.0.1:9"),
    path: "/api",
};

pub static NAME_ONLY: ClientMeta = ClientMeta {
    trait_name: "OrderService",
    service: "order-service",
    url: None,
    path: "/api",
};

const fn meta(
    name: &'static str,
    key: &'static str,
    method: HttpMethod,
    route: &'static str,
    path: &'static [PathPart],
    idempotent: bool,
) -> MethodMeta {
    MethodMeta {
        key,
        name,
        method,
        route,
        path,
        query: &[],
        headers: &[("Accept", "application/json")],
        idempotent,
        options: MethodOptions::NONE,
    }
}

pub static GET_ORDER: MethodMeta = meta(
    "get_order",
    "OrderService#get_order",
    HttpMethod::Get,
    "GET /orders/{id}",
    &[PathPart::Literal("/orders/"), PathPart::Var(0)],
    true,
);
pub static GET_ITEM: MethodMeta = meta(
    "get_item",
    "OrderService#get_item",
    HttpMethod::Get,
    "GET /orders/{id}/items/{item}",
    &[
        PathPart::Literal("/orders/"),
        PathPart::Var(0),
        PathPart::Literal("/items/"),
        PathPart::Var(1),
    ],
    true,
);
pub static FIND: MethodMeta = MethodMeta {
    query: &[("fixed", "a%20b")],
    ..meta(
        "find",
        "OrderService#find",
        HttpMethod::Get,
        "GET /orders?fixed=a b",
        &[PathPart::Literal("/orders")],
        true,
    )
};
pub static CREATE: MethodMeta = MethodMeta {
    headers: &[("Accept", "application/json"), ("X-Source", "feign")],
    ..meta(
        "create",
        "OrderService#create",
        HttpMethod::Post,
        "POST /orders",
        &[PathPart::Literal("/orders")],
        false,
    )
};
pub static CANCEL: MethodMeta = meta(
    "cancel",
    "OrderService#cancel",
    HttpMethod::Delete,
    "DELETE /orders/{id}",
    &[PathPart::Literal("/orders/"), PathPart::Var(0)],
    true,
);
pub static RAW: MethodMeta = meta(
    "raw",
    "OrderService#raw",
    HttpMethod::Get,
    "GET /raw",
    &[PathPart::Literal("/raw")],
    true,
);
pub static SLOW: MethodMeta = MethodMeta {
    options: MethodOptions {
        read_timeout_ms: Some(200),
        ..MethodOptions::NONE
    },
    ..meta(
        "slow",
        "OrderService#slow",
        HttpMethod::Get,
        "GET /raw",
        &[PathPart::Literal("/raw")],
        true,
    )
};

/// What `#[feign_client]` generates for `OrderService`, written by hand.
#[derive(Clone, Debug)]
pub struct OrderClient {
    core: Core,
}

impl FromCore for OrderClient {
    fn from_core(core: Core) -> Self {
        OrderClient { core }
    }
}

impl OrderClient {
    pub fn builder() -> Builder<Self> {
        __private::builder(&CLIENT)
    }

    pub fn name_only() -> Builder<Self> {
        __private::builder(&NAME_ONLY)
    }

    pub fn core(&self) -> &Core {
        &self.core
    }

    pub async fn get_order(&self, id: &(impl std::fmt::Display + ?Sized)) -> Result<Order, Error> {
        let mut req = self.core.request(&GET_ORDER);
        req.path(0, id);
        let res = self.core.execute(req).await;
        __private::decode::<Order>(&self.core, &GET_ORDER, res)
    }

    pub async fn get_order_text(&self, id: &str) -> Result<String, Error> {
        let mut req = self.core.request(&GET_ORDER);
        req.path(0, id);
        let res = self.core.execute(req).await;
        __private::decode_string(&self.core, &GET_ORDER, res)
    }

    pub async fn try_get(&self, id: u64) -> Result<Option<Order>, Error> {
        let mut req = self.core.request(&GET_ORDER);
        req.path(0, &id);
        let res = self.core.execute_optional(req).await;
        __private::decode_optional::<Order>(&self.core, &GET_ORDER, res)
    }

    pub async fn get_item(&self, id: &str, item: &str) -> Result<String, Error> {
        let mut req = self.core.request(&GET_ITEM);
        req.path(1, item);
        req.path(0, id);
        let res = self.core.execute(req).await;
        __private::decode_string(&self.core, &GET_ITEM, res)
    }

    pub async fn find(
        &self,
        pairs: &[(&str, &str)],
        status: Option<&str>,
        tags: &[&str],
    ) -> Result<String, Error> {
        let mut req = self.core.request(&FIND);
        if let Some(status) = status {
            req.query("status", status);
        }
        for tag in tags {
            req.query("tag", tag);
        }
        for (name, value) in pairs {
            req.query(name, value);
        }
        let res = self.core.execute(req).await;
        __private::decode_string(&self.core, &FIND, res)
    }

    pub async fn find_map<T: Serialize + ?Sized>(&self, filter: &T) -> Result<String, Error> {
        let mut req = self.core.request(&FIND);
        req.query_map(filter);
        let res = self.core.execute(req).await;
        __private::decode_string(&self.core, &FIND, res)
    }

    pub async fn create(&self, order: &NewOrder, rid: &str) -> Result<Order, Error> {
        let mut req = self.core.request(&CREATE);
        req.body(order);
        req.header("X-Request-Id", rid);
        let res = self.core.execute(req).await;
        __private::decode::<Order>(&self.core, &CREATE, res)
    }

    pub async fn create_with_headers<H: __private::HeaderMapArg + ?Sized>(
        &self,
        headers: &H,
    ) -> Result<(), Error> {
        let mut req = self.core.request(&CREATE);
        req.header_map(headers);
        req.body_raw("raw body");
        let res = self.core.execute(req).await;
        __private::decode_unit(&self.core, &CREATE, res)
    }

    pub async fn create_form<T: Serialize + ?Sized>(&self, form: &T) -> Result<Bytes, Error> {
        let mut req = self.core.request(&CREATE);
        req.form(form);
        let res = self.core.execute(req).await;
        __private::decode_bytes(&self.core, &CREATE, res)
    }

    pub async fn cancel(&self, id: &str) -> Result<(), Error> {
        let mut req = self.core.request(&CANCEL);
        req.path(0, id);
        let res = self.core.execute(req).await;
        __private::decode_unit(&self.core, &CANCEL, res)
    }

    pub async fn raw(&self) -> Result<Response, Error> {
        let req = self.core.request(&RAW);
        let res = self.core.execute(req).await;
        __private::decode_response(&self.core, &RAW, res)
    }

    pub async fn raw_json(&self) -> Result<serde_json::Value, Error> {
        let req = self.core.request(&RAW);
        let res = self.core.execute(req).await;
        __private::decode::<serde_json::Value>(&self.core, &RAW, res)
    }

    pub async fn slow(&self) -> Result<Bytes, Error> {
        let req = self.core.request(&SLOW);
        let res = self.core.execute(req).await;
        __private::decode_bytes(&self.core, &SLOW, res)
    }

    pub async fn header(&self, name: &str, value: &str) -> Result<(), Error> {
        let mut req = self.core.request(&RAW);
        req.header(name, value);
        let res = self.core.execute(req).await;
        __private::decode_unit(&self.core, &RAW, res)
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: http::Method,
    /// The request target exactly as sent: path and query.
    pub target: String,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

/// An HTTP/1 server on 127.0.0.1 that records every connection and request, then hands the
/// request to an axum router.
pub struct Server {
    pub addr: SocketAddr,
    pub connections: Arc<AtomicUsize>,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    pub async fn start(router: Router) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (conns, reqs) = (connections.clone(), requests.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                conns.fetch_add(1, Ordering::SeqCst);
                let (router, reqs) = (router.clone(), reqs.clone());
                let service = hyper::service::service_fn(move |req: http::Request<Incoming>| {
                    let (router, reqs) = (router.clone(), reqs.clone());
                    async move {
                        let (parts, body) = req.into_parts();
                        let body = body
                            .collect()
                            .await
                            .map(|c| c.to_bytes())
                            .unwrap_or_default();
                        reqs.lock().unwrap().push(Recorded {
                            method: parts.method.clone(),
                            target: parts
                                .uri
                                .path_and_query()
                                .map(|p| p.as_str().to_owned())
                                .unwrap_or_default(),
                            headers: parts.headers.clone(),
                            body: body.clone(),
                        });
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

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn connection_count(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    pub fn last_target(&self) -> Option<String> {
        self.requests
            .lock()
            .unwrap()
            .last()
            .map(|r| r.target.clone())
    }

    pub fn targets(&self) -> Vec<String> {
        self.recorded().into_iter().map(|r| r.target).collect()
    }
}

/// A raw TCP server: for every connection, reads the request head and writes `reply` as is,
/// then keeps the socket open for `linger` before closing. Counts connections.
pub struct RawServer {
    pub addr: SocketAddr,
    pub connections: Arc<AtomicUsize>,
}

impl RawServer {
    pub async fn start(reply: &'static [u8]) -> RawServer {
        RawServer::start_with(move |_| reply.to_vec(), std::time::Duration::ZERO).await
    }

    pub async fn start_with<F>(reply: F, linger: std::time::Duration) -> RawServer
    where
        F: Fn(usize) -> Vec<u8> + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let conns = connections.clone();
        let reply = Arc::new(reply);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let n = conns.fetch_add(1, Ordering::SeqCst);
                let reply = reply.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let _ = stream.write_all(&reply(n)).await;
                    if !linger.is_zero() {
                        tokio::time::sleep(linger).await;
                    }
                });
            }
        });
        RawServer { addr, connections }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn connection_count(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// A port on 127.0.0.1 where nothing listens.
pub async fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

/// A `tracing` writer that keeps everything written, to read logs back in tests.
#[derive(Clone, Default)]
pub struct Captured(pub Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A directory under the system temp dir, removed on drop: where tests write config files.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!(
            "feign-core-config-{tag}-{}-{n}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A retryer allowing `attempts` attempts, 1 ms apart and without jitter, for tests that count
/// what the retries record.
pub fn quick_retryer(attempts: u32) -> feign_core::Retryer {
    feign_core::Retryer::default()
        .jitter(false)
        .period(std::time::Duration::from_millis(1))
        .max_attempts(attempts)
}

/// A server for `GET /api/orders/{id}` (the order, as JSON) and
/// `GET /api/orders/{id}/items/{item}` (always 503), for tests of what a call records.
pub async fn orders_server() -> Server {
    Server::start(
        Router::new()
            .route(
                "/api/orders/{id}",
                axum::routing::get(
                    |axum::extract::Path(id): axum::extract::Path<u64>| async move {
                        axum::Json(Order {
                            id,
                            item: "book".into(),
                        })
                    },
                ),
            )
            .route(
                "/api/orders/{id}/items/{item}",
                axum::routing::get(|| async {
                    (axum::http::StatusCode::SERVICE_UNAVAILABLE, "busy")
                }),
            ),
    )
    .await
}
