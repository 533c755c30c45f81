//! [`ForwardProxy`]: an HTTP proxy on 127.0.0.1 that records what goes through it, forwards
//! absolute-form requests and tunnels `CONNECT`, to loopback targets only.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use http::{Method, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

/// One request the proxy received.
#[derive(Debug, Clone)]
pub struct ProxyRequest {
    /// `CONNECT` for a tunnel, else the forwarded request's method.
    pub method: Method,
    /// The request target as received: the absolute URL, or `host:port` for `CONNECT`.
    pub target: String,
    /// The `Proxy-Authorization` header, if any.
    pub authorization: Option<String>,
}

/// A forwarding proxy on a fresh loopback port.
#[derive(Debug, Clone)]
pub struct ForwardProxy {
    /// Where it listens.
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<ProxyRequest>>>,
}

impl ForwardProxy {
    /// Starts a proxy. With `required`, a request whose `Proxy-Authorization` is not exactly
    /// that value gets `407` and goes nowhere.
    pub async fn start(required: Option<String>) -> ForwardProxy {
        ForwardProxy::listen(required, None).await
    }

    /// Like [`ForwardProxy::start`], the client reaching the proxy itself over TLS (an
    /// `https://` proxy URL), with `pki`'s server certificate.
    pub async fn start_tls(required: Option<String>, pki: &crate::tls::Pki) -> ForwardProxy {
        let acceptor = crate::tls::acceptor(pki, &crate::tls::TlsOptions::default());
        ForwardProxy::listen(required, Some(acceptor)).await
    }

    async fn listen(
        required: Option<String>,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) -> ForwardProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let seen: Arc<Mutex<Vec<ProxyRequest>>> = Arc::default();
        let (log, required) = (seen.clone(), Arc::new(required));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (log, required, tls) = (log.clone(), required.clone(), tls.clone());
                let service = hyper::service::service_fn(move |req: http::Request<Incoming>| {
                    let (log, required) = (log.clone(), required.clone());
                    async move { Ok::<_, Infallible>(handle(req, &log, required.as_deref()).await) }
                });
                tokio::spawn(async move {
                    let http = hyper::server::conn::http1::Builder::new();
                    let _ = match tls {
                        Some(tls) => match tls.accept(stream).await {
                            Ok(stream) => {
                                http.serve_connection(TokioIo::new(stream), service)
                                    .with_upgrades()
                                    .await
                            }
                            Err(_) => return,
                        },
                        None => {
                            http.serve_connection(TokioIo::new(stream), service)
                                .with_upgrades()
                                .await
                        }
                    };
                });
            }
        });
        ForwardProxy { addr, seen }
    }

    /// The proxy's URL, `http://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received, oldest first.
    pub fn seen(&self) -> Vec<ProxyRequest> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn status(code: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}

async fn handle(
    mut req: http::Request<Incoming>,
    log: &Mutex<Vec<ProxyRequest>>,
    required: Option<&str>,
) -> Response<Body> {
    let authorization = req
        .headers()
        .get(http::header::PROXY_AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    log.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(ProxyRequest {
            method: req.method().clone(),
            target: req.uri().to_string(),
            authorization: authorization.clone(),
        });
    if required.is_some() && authorization.as_deref() != required {
        return status(StatusCode::PROXY_AUTHENTICATION_REQUIRED);
    }
    let Some(authority) = req.uri().authority().cloned() else {
        return status(StatusCode::BAD_REQUEST);
    };
    if !matches!(authority.host(), "127.0.0.1" | "localhost") {
        return status(StatusCode::FORBIDDEN);
    }
    let Ok(upstream) = TcpStream::connect(authority.as_str()).await else {
        return status(StatusCode::BAD_GATEWAY);
    };
    if req.method() == Method::CONNECT {
        tokio::spawn(async move {
            if let Ok(upgraded) = hyper::upgrade::on(req).await {
                let mut upstream = upstream;
                let _ =
                    tokio::io::copy_bidirectional(&mut TokioIo::new(upgraded), &mut upstream).await;
            }
        });
        return status(StatusCode::OK);
    }
    let Ok((mut sender, connection)) =
        hyper::client::conn::http1::handshake(TokioIo::new(upstream)).await
    else {
        return status(StatusCode::BAD_GATEWAY);
    };
    tokio::spawn(connection);
    let origin_form = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .parse()
        .expect("a path");
    *req.uri_mut() = origin_form;
    req.headers_mut().remove(http::header::PROXY_AUTHORIZATION);
    match sender.send_request(req).await {
        Ok(response) => response.map(Body::new),
        Err(_) => status(StatusCode::BAD_GATEWAY),
    }
}
