//! The order server every benchmark calls: hyper, HTTP/1.1, `GET /orders/{id}` answering
//! `{"id":N,"item":"book","quantity":1}`.
//!
//! A [`Backend`] counts the calls it receives and those it answers, remembers when it answered
//! the first and the last, can be made slow (on every call or on one call in N), and can be
//! killed: its listener and every open connection close at once, as when the process dies.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::runtime::Handle;
use tokio::task::AbortHandle;

/// Call counts and times shared between a [`Backend`] and its connections.
#[derive(Debug)]
struct Counters {
    epoch: Instant,
    hits: AtomicU64,
    /// Calls received, answered or not (a call whose client gave up counts here only).
    arrivals: AtomicU64,
    /// Nanoseconds after `epoch` of the first answered call, plus one (0: none yet).
    first_hit: AtomicU64,
    /// Nanoseconds after `epoch` of the latest answered call, plus one (0: none yet).
    last_hit: AtomicU64,
    delay_us: AtomicU64,
    /// The extra wait of the calls [`Backend::set_slow_share`] picks.
    slow_us: AtomicU64,
    /// One received call in this many waits `slow_us` (0: none).
    slow_one_in: AtomicU64,
}

impl Counters {
    fn record(&self) {
        self.hits.fetch_add(1, Ordering::Relaxed);
        let now = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX - 1) + 1;
        let _ = self
            .first_hit
            .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
        self.last_hit.fetch_max(now, Ordering::Relaxed);
    }

    fn at(&self, stamp: u64) -> Option<Instant> {
        (stamp != 0).then(|| self.epoch + Duration::from_nanos(stamp - 1))
    }
}

/// One running order server on `127.0.0.1`, served by the runtime it was started on.
#[derive(Debug)]
pub struct Backend {
    addr: SocketAddr,
    counters: Arc<Counters>,
    accept: AbortHandle,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Backend {
    /// Binds an ephemeral port on 127.0.0.1 and serves on the runtime behind `runtime` (the
    /// socket is registered with that runtime, not the caller's).
    pub fn start(runtime: &Handle) -> std::io::Result<Backend> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let counters = Arc::new(Counters {
            epoch: Instant::now(),
            hits: AtomicU64::new(0),
            first_hit: AtomicU64::new(0),
            last_hit: AtomicU64::new(0),
            delay_us: AtomicU64::new(0),
            arrivals: AtomicU64::new(0),
            slow_us: AtomicU64::new(0),
            slow_one_in: AtomicU64::new(0),
        });
        let connections = Arc::new(Mutex::new(Vec::new()));
        let accept = runtime
            .spawn(accept_loop(
                listener,
                counters.clone(),
                connections.clone(),
                runtime.clone(),
            ))
            .abort_handle();
        Ok(Backend {
            addr,
            counters,
            accept,
            connections,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Calls answered so far.
    pub fn hits(&self) -> u64 {
        self.counters.hits.load(Ordering::Relaxed)
    }

    /// Calls received so far, answered or not: attempts the client cancelled count here and
    /// not in [`hits`](Backend::hits).
    pub fn arrivals(&self) -> u64 {
        self.counters.arrivals.load(Ordering::Relaxed)
    }

    /// When the first call was answered.
    pub fn first_hit(&self) -> Option<Instant> {
        self.counters
            .at(self.counters.first_hit.load(Ordering::Relaxed))
    }

    /// When the latest call was answered.
    pub fn last_hit(&self) -> Option<Instant> {
        self.counters
            .at(self.counters.last_hit.load(Ordering::Relaxed))
    }

    /// Makes every following answer wait `delay` first (zero: answer at once).
    pub fn set_delay(&self, delay: Duration) {
        let micros = u64::try_from(delay.as_micros()).unwrap_or(u64::MAX);
        self.counters.delay_us.store(micros, Ordering::Relaxed);
    }

    /// Makes one received call in `one_in` (the `one_in`-th, the `2 × one_in`-th...) wait
    /// `delay` more before it is answered: a deterministic share of slow calls, `1 / one_in`.
    /// `one_in` 0 makes none slow.
    pub fn set_slow_share(&self, delay: Duration, one_in: u64) {
        let micros = u64::try_from(delay.as_micros()).unwrap_or(u64::MAX);
        self.counters.slow_us.store(micros, Ordering::Relaxed);
        self.counters.slow_one_in.store(one_in, Ordering::Relaxed);
    }

    /// Closes the listener and every open connection at once, without answering what is in
    /// flight: the port refuses connections from now on.
    pub fn kill(&self) {
        self.accept.abort();
        let connections = std::mem::take(
            &mut *self
                .connections
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        for connection in connections {
            connection.abort();
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn accept_loop(
    listener: std::net::TcpListener,
    counters: Arc<Counters>,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
    runtime: Handle,
) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors or a connection reset before accept: try again shortly.
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let counters = counters.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let counters = counters.clone();
            async move { Ok::<_, Infallible>(answer(&request, &counters).await) }
        });
        let task = runtime.spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
        let mut open = connections
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        open.retain(|connection| !connection.is_finished());
        open.push(task.abort_handle());
    }
}

async fn answer(request: &Request<Incoming>, counters: &Counters) -> Response<Full<Bytes>> {
    let id = request
        .uri()
        .path()
        .strip_prefix("/orders/")
        .and_then(|id| id.parse::<u64>().ok());
    let Some(id) = id.filter(|_| request.method() == hyper::Method::GET) else {
        return status(StatusCode::NOT_FOUND);
    };
    let arrival = counters.arrivals.fetch_add(1, Ordering::Relaxed) + 1;
    let one_in = counters.slow_one_in.load(Ordering::Relaxed);
    let mut delay = counters.delay_us.load(Ordering::Relaxed);
    if one_in > 0 && arrival % one_in == 0 {
        delay = delay.saturating_add(counters.slow_us.load(Ordering::Relaxed));
    }
    if delay > 0 {
        tokio::time::sleep(Duration::from_micros(delay)).await;
    }
    counters.record();
    let body = format!(r#"{{"id":{id},"item":"book","quantity":1}}"#);
    Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR))
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

/// A multi-threaded Tokio runtime on its own threads, so servers do not share the client's
/// scheduler (the operating system still shares the cores).
#[derive(Debug)]
pub struct ServerRuntime {
    runtime: Option<tokio::runtime::Runtime>,
}

impl ServerRuntime {
    /// A runtime with `workers` worker threads named `bench-server`.
    pub fn new(workers: usize) -> std::io::Result<ServerRuntime> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers.max(1))
            .thread_name("bench-server")
            .enable_all()
            .build()?;
        Ok(ServerRuntime {
            runtime: Some(runtime),
        })
    }

    /// Its handle, to start [`Backend`]s on.
    pub fn handle(&self) -> Handle {
        match &self.runtime {
            Some(runtime) => runtime.handle().clone(),
            None => Handle::current(),
        }
    }
}

impl Drop for ServerRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
