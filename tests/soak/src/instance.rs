//! One service instance: a small axum application on a loopback port, over HTTP or HTTPS,
//! registered through feign-eureka's `EurekaClient`, optionally behind a [`FaultProxy`] (then the
//! proxy's port is what it registers). It books every request it answers: the POSTs and GETs by
//! call number, the configuration version the request carried, and one more answer for its slot.
//!
//! It serves its own connections, kept in a `JoinSet`, so that [`Instance::abort`] closes every
//! one of them at once, as a crashed process would; `axum::serve` would leave them running.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use feign_eureka::{EurekaClient, InstanceConfig};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::ledger::Ledger;
use crate::live::{Seen, CONFIG_HEADER};
use crate::proxy::FaultProxy;
use crate::settings;

/// The header a POST carries its key in: one per call, counted by the servers.
///
/// Not `Idempotency-Key`: feign-core reads that header as the server's promise to execute a
/// key once, and so retries such a POST like a GET. These POSTs are plain, non-idempotent
/// calls, so a second execution can only come from a retry that should not have happened.
pub(crate) const CALL_KEY: &str = "X-Call-Key";

/// What `GET /items/{id}` answers.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Item {
    /// The id asked for.
    pub(crate) id: u64,
    /// The instance that answered.
    pub(crate) served_by: String,
}

/// What `POST /orders` takes.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct NewOrder {
    /// What is ordered.
    pub(crate) item: String,
}

/// Where every instance books the requests it answers.
#[derive(Clone)]
pub(crate) struct Books {
    /// POSTs executed, by call key.
    pub(crate) posts: Arc<Ledger>,
    /// GET requests answered, by call number.
    pub(crate) gets: Arc<Ledger>,
    /// When each configuration version was first seen on a request.
    pub(crate) config: Arc<Seen>,
}

#[derive(Clone)]
struct AppState {
    id: String,
    books: Books,
    /// Requests answered by the instances of this slot.
    served: Arc<AtomicU64>,
}

impl AppState {
    /// Books a request: its configuration version, and one more answer for the slot.
    fn answered(&self, headers: &HeaderMap) {
        if let Some(version) = headers.get(CONFIG_HEADER).and_then(|v| v.to_str().ok()) {
            self.books.config.note(version);
        }
        self.served.fetch_add(1, Ordering::Relaxed);
    }
}

/// How an instance is started.
pub(crate) struct Spec<'a> {
    /// Its service.
    pub(crate) service: &'a str,
    /// Whether it sits behind a fault proxy.
    pub(crate) proxied: bool,
    /// Serves HTTPS with this acceptor, plain HTTP without.
    pub(crate) tls: Option<TlsAcceptor>,
    /// The registries' URLs.
    pub(crate) urls: &'a [String],
    /// Where it books requests.
    pub(crate) books: Books,
    /// Its slot's answer count.
    pub(crate) served: Arc<AtomicU64>,
    /// Seeds its Eureka client.
    pub(crate) seed: u64,
}

/// A running instance.
pub(crate) struct Instance {
    /// `service@127.0.0.1:PORT`, PORT being the registered one.
    pub(crate) id: String,
    /// The id it registers under: `127.0.0.1:PORT`.
    pub(crate) instance_id: String,
    /// Where its server listens (behind the proxy, if any).
    pub(crate) served: SocketAddr,
    eureka: EurekaClient,
    proxy: Option<FaultProxy>,
    stop: watch::Sender<bool>,
    server: JoinHandle<()>,
}

impl Instance {
    /// Serves, optionally behind a proxy, and registers with the registries.
    pub(crate) async fn start(spec: Spec<'_>) -> std::io::Result<Instance> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let served = listener.local_addr()?;
        let proxy = match spec.proxied {
            true => Some(FaultProxy::start(served).await?),
            false => None,
        };
        let advertised: SocketAddr = proxy.as_ref().map_or(served, FaultProxy::addr);
        let instance_id = advertised.to_string();
        let id = format!("{}@{instance_id}", spec.service);
        let app = Router::new()
            .route("/items/{id}", get(get_item))
            .route("/orders", post(create_order))
            .with_state(AppState {
                id: id.clone(),
                books: spec.books,
                served: spec.served,
            });
        let (stop, stopped) = watch::channel(false);
        let secure = spec.tls.is_some();
        let server = tokio::spawn(serve(listener, app, spec.tls, stopped));
        let mut instance = InstanceConfig::bound_to(spec.service, advertised)
            .instance_id(instance_id.clone())
            .lease_renewal_interval(settings::LEASE_RENEWAL)
            .lease_expiration_duration(settings::LEASE_EXPIRATION);
        if secure {
            instance = instance
                .secure_port(advertised.port())
                .non_secure_port_enabled(false);
        }
        let eureka = EurekaClient::builder()
            .service_urls(spec.urls)
            .fetch_registry(false)
            .registration_jitter(Duration::ZERO)
            .connect_timeout(settings::EUREKA_CONNECT_TIMEOUT)
            .read_timeout(settings::EUREKA_READ_TIMEOUT)
            .shutdown_timeout(settings::EUREKA_READ_TIMEOUT)
            .seed(spec.seed)
            .instance(instance)
            .start()
            .await
            .map_err(std::io::Error::other)?;
        Ok(Instance {
            id,
            instance_id,
            served,
            eureka,
            proxy,
            stop,
            server,
        })
    }

    /// The proxy in front, if any.
    pub(crate) fn proxy(&self) -> Option<&FaultProxy> {
        self.proxy.as_ref()
    }

    /// Whether a registry has accepted the registration.
    pub(crate) fn is_registered(&self) -> bool {
        self.eureka.is_registered()
    }

    /// A graceful stop: deregisters, then lets the calls in progress finish and closes.
    pub(crate) async fn stop(self) {
        self.eureka.shutdown().await;
        let _ = self.stop.send(true);
        let mut server = self.server;
        if tokio::time::timeout(Duration::from_secs(2), &mut server)
            .await
            .is_err()
        {
            server.abort();
        }
    }

    /// A crash: the server and every open connection vanish, and the registration is left to
    /// expire (the Eureka client is dropped, which stops heartbeats without deregistering).
    pub(crate) fn abort(self) {
        self.server.abort();
        drop(self.eureka);
    }
}

async fn serve(
    listener: TcpListener,
    app: Router,
    tls: Option<TlsAcceptor>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    let for_connections = stopped.clone();
    loop {
        while connections.try_join_next().is_some() {}
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    let (stop, app) = (for_connections.clone(), app.clone());
                    match &tls {
                        None => connections.spawn(serve_connection(stream, app, stop)),
                        Some(tls) => connections.spawn(serve_tls(tls.clone(), stream, app, stop)),
                    };
                }
            }
            _ = stopped.wait_for(|stop| *stop) => break,
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// Shakes hands (within [`settings::HANDSHAKE_TIMEOUT`]), then serves.
async fn serve_tls(
    tls: TlsAcceptor,
    stream: tokio::net::TcpStream,
    app: Router,
    stopped: watch::Receiver<bool>,
) {
    let handshake = tokio::time::timeout(settings::HANDSHAKE_TIMEOUT, tls.accept(stream)).await;
    if let Ok(Ok(stream)) = handshake {
        serve_connection(stream, app, stopped).await;
    }
}

async fn serve_connection<S>(stream: S, app: Router, mut stopped: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request| app.clone().oneshot(request));
    let connection =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = stopped.wait_for(|stop| *stop) => connection.as_mut().graceful_shutdown(),
    }
    let _ = connection.await;
}

async fn get_item(
    State(state): State<AppState>,
    Path(id): Path<u64>,
    headers: HeaderMap,
) -> Json<Item> {
    state.books.gets.executed_number(id);
    state.answered(&headers);
    Json(Item {
        id,
        served_by: state.id,
    })
}

async fn create_order(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(order): Json<NewOrder>,
) -> Response {
    let Some(key) = headers.get(CALL_KEY).and_then(|value| value.to_str().ok()) else {
        return (StatusCode::BAD_REQUEST, "call key missing").into_response();
    };
    state.books.posts.executed(key);
    state.answered(&headers);
    let item = Item {
        id: order.item.len() as u64,
        served_by: state.id,
    };
    (StatusCode::CREATED, Json(item)).into_response()
}
