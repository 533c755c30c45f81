//! Load-balanced backends: loopback axum servers that can answer, fail with 503, hang, or die,
//! and a hand-written client shaped like the code `#[feign_client]` generates, resolved through
//! a `feign_lb::LoadBalancer`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::Router;
use feign_core::__private::{
    self, ClientMeta, Core, FromCore, HttpMethod, MethodMeta, MethodOptions, PathPart,
};
use feign_core::{Error, Options};
use feign_lb::LoadBalancer;

/// What a backend does with the next requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// Answers 200 `ok` at once.
    Ok = 0,
    /// Answers 503.
    Unavailable = 1,
    /// Answers only after 30 s.
    Hang = 2,
    /// Answers after a delay (the scenario runner's slow backend).
    Slow = 3,
}

#[derive(Default)]
struct Record {
    hits: AtomicUsize,
    log: Mutex<Vec<(Method, String)>>,
}

#[derive(Clone)]
struct Shared {
    mode: Arc<AtomicU8>,
    delay_us: Arc<AtomicUsize>,
    record: Arc<Record>,
}

/// An HTTP server on 127.0.0.1 with its own runtime and thread, so that [`Backend::kill`]
/// really closes its listener and every open connection.
pub struct Backend {
    /// Where it listens.
    pub addr: SocketAddr,
    shared: Shared,
    kill: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

async fn handle(State(shared): State<Shared>, method: Method, uri: Uri) -> (StatusCode, String) {
    shared.record.hits.fetch_add(1, Ordering::SeqCst);
    shared
        .record
        .log
        .lock()
        .unwrap()
        .push((method, uri.to_string()));
    match shared.mode.load(Ordering::SeqCst) {
        1 => (StatusCode::SERVICE_UNAVAILABLE, "unavailable".into()),
        2 => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            (StatusCode::OK, "late".into())
        }
        3 => {
            let us = shared.delay_us.load(Ordering::SeqCst) as u64;
            tokio::time::sleep(Duration::from_micros(us)).await;
            (StatusCode::OK, "ok".into())
        }
        _ => (StatusCode::OK, "ok".into()),
    }
}

impl Backend {
    /// Starts a backend in [`Mode::Ok`].
    pub fn start() -> Backend {
        Backend::start_with_delay(Duration::ZERO)
    }

    /// A backend whose [`Mode::Slow`] answers take `delay`.
    pub fn start_with_delay(delay: Duration) -> Backend {
        let shared = Shared {
            mode: Arc::new(AtomicU8::new(Mode::Ok as u8)),
            delay_us: Arc::new(AtomicUsize::new(delay.as_micros() as usize)),
            record: Arc::new(Record::default()),
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = killed => {}
                }
            });
            // Dropping the runtime drops every connection task: open sockets close.
        });
        Backend {
            addr,
            shared,
            kill: Some(kill),
            thread: Some(thread),
        }
    }

    /// The base URL, `http://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Changes what the next requests get.
    pub fn set_mode(&self, mode: Mode) {
        self.shared.mode.store(mode as u8, Ordering::SeqCst);
    }

    /// Changes how long [`Mode::Slow`] answers take.
    pub fn set_delay(&self, delay: Duration) {
        self.shared
            .delay_us
            .store(delay.as_micros() as usize, Ordering::SeqCst);
    }

    /// How many requests arrived.
    pub fn hits(&self) -> usize {
        self.shared.record.hits.load(Ordering::SeqCst)
    }

    /// Every request's method and target, oldest first.
    pub fn log(&self) -> Vec<(Method, String)> {
        self.shared.record.log.lock().unwrap().clone()
    }

    /// Stops the server: the listener and all its connections close; later connects are refused.
    pub fn kill(&mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The client's metadata: service `order-service`, no URL (a balancer resolves it), no base path.
pub static ORDERS: ClientMeta = ClientMeta {
    trait_name: "OrderService",
    service: "order-service",
    url: None,
    path: "",
};

/// `GET /orders/{id}`, idempotent.
pub static GET_ORDER: MethodMeta = MethodMeta {
    key: "OrderService#get_order",
    name: "get_order",
    method: HttpMethod::Get,
    route: "GET /orders/{id}",
    path: &[PathPart::Literal("/orders/"), PathPart::Var(0)],
    query: &[],
    headers: &[],
    idempotent: true,
    options: MethodOptions::NONE,
};

/// `POST /orders/{id}`, not idempotent.
pub static CREATE_ORDER: MethodMeta = MethodMeta {
    key: "OrderService#create_order",
    name: "create_order",
    method: HttpMethod::Post,
    route: "POST /orders/{id}",
    path: &[PathPart::Literal("/orders/"), PathPart::Var(0)],
    query: &[],
    headers: &[],
    idempotent: false,
    options: MethodOptions::NONE,
};

/// What `#[feign_client("order-service")]` generates for `get_order` and `create_order`.
#[derive(Clone, Debug)]
pub struct OrderServiceClient {
    core: Core,
}

impl FromCore for OrderServiceClient {
    fn from_core(core: Core) -> Self {
        OrderServiceClient { core }
    }
}

impl OrderServiceClient {
    /// The client's core, for tests that send methods of their own.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// A builder for the client ([`ORDERS`]).
    pub fn builder() -> feign_core::Builder<Self> {
        __private::builder(&ORDERS)
    }

    /// `GET /orders/{id}`, the body as text.
    pub async fn get_order(&self, id: u64) -> Result<String, Error> {
        let mut req = self.core.request(&GET_ORDER);
        req.path(0, &id);
        self.core.call::<__private::Text>(req).await
    }

    /// `POST /orders/{id}` with the body `{}`, the answer as text.
    pub async fn create_order(&self, id: u64) -> Result<String, Error> {
        let mut req = self.core.request(&CREATE_ORDER);
        req.path(0, &id);
        req.body_raw("{}");
        self.core.call::<__private::Text>(req).await
    }
}

/// A client resolved through `lb`, with a per-try (read) timeout of `per_try`.
pub fn client(lb: &LoadBalancer, per_try: Duration) -> OrderServiceClient {
    OrderServiceClient::builder()
        .load_balancer(lb.clone())
        .options(
            Options::new()
                .connect_timeout(Duration::from_millis(500))
                .read_timeout(per_try),
        )
        .build()
        .expect("client builds")
}
