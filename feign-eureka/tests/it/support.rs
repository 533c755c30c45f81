//! A small Eureka-speaking HTTP server on 127.0.0.1 for client tests.
//!
//! It answers like a Eureka server (§2 of the protocol notes): register stores the instance
//! and answers 204, heartbeats answer 200 for known instances and 404 otherwise, cancel removes,
//! `GET apps/` serves the stored registry with its reconcile hash, `GET apps/delta` serves the
//! configured delta (403 when none). Every request is recorded with its (tokio) arrival time.
//! Switches make it drop connections, hang, or answer a fixed status.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use feign_eureka::model::{Application, Applications, InstanceInfo};
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) query: BTreeMap<String, String>,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) at: Instant,
}

impl Recorded {
    pub(crate) fn is(&self, method: &str, path_prefix: &str) -> bool {
        self.method.as_str() == method && self.path.starts_with(path_prefix)
    }
}

/// How the server behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Answers like Eureka.
    Normal,
    /// Accepts connections and closes them at once (requests are still recorded as attempts).
    DropConnections,
    /// Reads the request and never answers.
    Hang,
    /// Answers every request with this status and an error body.
    Status(u16),
}

#[derive(Default)]
struct State {
    requests: Vec<Recorded>,
    /// Registered instances by (APP, id).
    registry: BTreeMap<(String, String), InstanceInfo>,
    /// Served at `GET apps/delta` when set.
    delta: Option<String>,
    /// Served at `GET apps/` instead of the registry when set.
    full_override: Option<String>,
    mode: Option<Mode>,
    /// Status answered to heartbeats only, when set.
    heartbeat_status: Option<u16>,
    /// Gzip responses to GETs that accept it.
    gzip: bool,
    connection_attempts: Vec<Instant>,
}

/// The running fake server.
#[derive(Clone)]
pub(crate) struct FakeEureka {
    pub(crate) addr: SocketAddr,
    state: Arc<Mutex<State>>,
    _tasks: Arc<Mutex<JoinSet<()>>>,
}

impl FakeEureka {
    pub(crate) async fn start() -> FakeEureka {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            mode: Some(Mode::Normal),
            ..State::default()
        }));
        let tasks = Arc::new(Mutex::new(JoinSet::new()));
        let accept_state = state.clone();
        let conn_tasks = tasks.clone();
        tasks.lock().unwrap().spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let state = accept_state.clone();
                let mode = {
                    let mut s = state.lock().unwrap();
                    s.connection_attempts.push(Instant::now());
                    s.mode.clone().unwrap_or(Mode::Normal)
                };
                if mode == Mode::DropConnections {
                    drop(stream);
                    continue;
                }
                conn_tasks.lock().unwrap().spawn(async move {
                    let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        FakeEureka {
            addr,
            state,
            _tasks: tasks,
        }
    }

    /// The service URL to give the client.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/eureka/", self.addr)
    }

    pub(crate) fn set_mode(&self, mode: Mode) {
        self.state.lock().unwrap().mode = Some(mode);
    }

    pub(crate) fn set_heartbeat_status(&self, status: Option<u16>) {
        self.state.lock().unwrap().heartbeat_status = status;
    }

    pub(crate) fn set_gzip(&self, gzip: bool) {
        self.state.lock().unwrap().gzip = gzip;
    }

    pub(crate) fn set_delta(&self, delta: Option<String>) {
        self.state.lock().unwrap().delta = delta;
    }

    pub(crate) fn set_full_override(&self, full: Option<String>) {
        self.state.lock().unwrap().full_override = full;
    }

    /// Puts an instance straight into the registry (as another client's registration would).
    pub(crate) fn put(&self, info: InstanceInfo) {
        let key = (info.app.clone(), info.id().to_owned());
        self.state.lock().unwrap().registry.insert(key, info);
    }

    /// Removes an instance (as an eviction would).
    pub(crate) fn remove(&self, app: &str, id: &str) {
        self.state
            .lock()
            .unwrap()
            .registry
            .remove(&(app.to_ascii_uppercase(), id.to_owned()));
    }

    /// Forgets every registration (as a restarted server would).
    pub(crate) fn forget_all(&self) {
        self.state.lock().unwrap().registry.clear();
    }

    pub(crate) fn registry(&self) -> Applications {
        registry_of(&self.state.lock().unwrap())
    }

    pub(crate) fn instance(&self, app: &str, id: &str) -> Option<InstanceInfo> {
        self.state
            .lock()
            .unwrap()
            .registry
            .get(&(app.to_ascii_uppercase(), id.to_owned()))
            .cloned()
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    pub(crate) fn requests_matching(&self, method: &str, prefix: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.is(method, prefix))
            .collect()
    }

    pub(crate) fn connection_attempts(&self) -> Vec<Instant> {
        self.state.lock().unwrap().connection_attempts.clone()
    }

    /// Waits (in virtual or real time) until `count` requests match, polling every 10 ms.
    pub(crate) async fn wait_for(&self, method: &str, prefix: &str, count: usize) -> Vec<Recorded> {
        for _ in 0..10_000 {
            let found = self.requests_matching(method, prefix);
            if found.len() >= count {
                return found;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!(
            "timed out waiting for {count} × {method} {prefix}; saw {:?}",
            self.requests()
                .iter()
                .map(|r| format!("{} {}", r.method, r.path))
                .collect::<Vec<_>>()
        );
    }
}

fn registry_of(state: &State) -> Applications {
    let mut apps: BTreeMap<String, Vec<InstanceInfo>> = BTreeMap::new();
    for ((app, _), info) in &state.registry {
        apps.entry(app.clone()).or_default().push(info.clone());
    }
    Applications::new(
        apps.into_iter()
            .map(|(name, instances)| Application::new(&name, instances))
            .collect(),
    )
}

fn respond(status: u16, body: Bytes, headers: &[(&str, &str)]) -> Response<Full<Bytes>> {
    let mut builder = Response::builder().status(StatusCode::from_u16(status).unwrap());
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder.body(Full::new(body)).unwrap()
}

fn json_answer(state: &State, accepts_gzip: bool, json: String) -> Response<Full<Bytes>> {
    if state.gzip && accepts_gzip {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(json.as_bytes()).unwrap();
        let body = encoder.finish().unwrap();
        return respond(
            200,
            body.into(),
            &[
                ("content-type", "application/json"),
                ("content-encoding", "gzip"),
            ],
        );
    }
    respond(200, json.into(), &[("content-type", "application/json")])
}

async fn handle(
    state: Arc<Mutex<State>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let path = parts.uri.path().to_owned();
    let query: BTreeMap<String, String> = parts
        .uri
        .query()
        .map(|q| {
            q.split('&')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let accepts_gzip = parts
        .headers
        .get("accept-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("gzip"));
    let mode = {
        let mut s = state.lock().unwrap();
        s.requests.push(Recorded {
            method: parts.method.clone(),
            path: path.clone(),
            query: query.clone(),
            headers: parts.headers.clone(),
            body: body.clone(),
            at: Instant::now(),
        });
        s.mode.clone().unwrap_or(Mode::Normal)
    };
    match mode {
        Mode::Hang => std::future::pending::<()>().await,
        Mode::Status(code) => {
            let err = r#"{"timestamp":"2026-01-01T00:00:00.000+00:00","status":500,"error":"Internal Server Error"}"#;
            return Ok(respond(
                code,
                Bytes::from_static(err.as_bytes()),
                &[("content-type", "application/json")],
            ));
        }
        Mode::DropConnections => {
            // A kept-alive connection from before the switch: close it without answering.
            state
                .lock()
                .unwrap()
                .connection_attempts
                .push(Instant::now());
            return Err(std::io::Error::other("dropping the connection"));
        }
        Mode::Normal => {}
    }
    let Some(rest) = path.strip_prefix("/eureka/") else {
        return Ok(respond(404, Bytes::new(), &[]));
    };
    let decoded: Vec<String> = rest
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect();
    let segments: Vec<&str> = decoded.iter().map(String::as_str).collect();
    let mut s = state.lock().unwrap();
    let answer = match (parts.method.as_str(), segments.as_slice()) {
        ("GET", ["apps"]) => {
            let json = s
                .full_override
                .clone()
                .unwrap_or_else(|| registry_of(&s).to_json());
            json_answer(&s, accepts_gzip, json)
        }
        ("GET", ["apps", "delta"]) => match s.delta.clone() {
            Some(delta) => json_answer(&s, accepts_gzip, delta),
            None => respond(403, Bytes::new(), &[]),
        },
        ("POST", ["apps", app]) => match InstanceInfo::from_json(&body) {
            Ok(info) if info.app.eq_ignore_ascii_case(app) => {
                let key = (info.app.clone(), info.id().to_owned());
                s.registry.insert(key, info);
                respond(204, Bytes::new(), &[])
            }
            _ => respond(400, Bytes::new(), &[]),
        },
        ("PUT", ["apps", app, id]) => {
            let known = s
                .registry
                .contains_key(&(app.to_ascii_uppercase(), (*id).to_owned()));
            let status = s.heartbeat_status.unwrap_or(if known { 200 } else { 404 });
            let err =
                r#"{"timestamp":"2026-01-01T00:00:00.000+00:00","status":404,"error":"Not Found"}"#;
            let body = if status == 200 {
                Bytes::new()
            } else {
                Bytes::from_static(err.as_bytes())
            };
            respond(status, body, &[])
        }
        ("DELETE", ["apps", app, id]) => {
            let removed = s
                .registry
                .remove(&(app.to_ascii_uppercase(), (*id).to_owned()))
                .is_some();
            respond(if removed { 200 } else { 404 }, Bytes::new(), &[])
        }
        _ => respond(404, Bytes::new(), &[]),
    };
    Ok(answer)
}

/// An instance of `app` at `10.0.0.{n}:8080`, UP, id `{app}-{n}`.
pub(crate) fn instance(app: &str, n: u8) -> InstanceInfo {
    let mut info = InstanceInfo::new(app, format!("10.0.0.{n}"), format!("10.0.0.{n}"), 8080);
    info.instance_id = Some(format!("{}-{n}", app.to_ascii_lowercase()));
    info.vip_address = Some(app.to_ascii_lowercase());
    info
}

/// One `feign_eureka` log event as a test subscriber saw it, with its (tokio) time.
#[derive(Clone, Debug)]
pub(crate) struct Logged {
    pub(crate) at: Instant,
    pub(crate) level: tracing::Level,
    pub(crate) message: String,
    /// Every other field, as `name=value`.
    pub(crate) fields: BTreeMap<String, String>,
}

/// Records the `feign_eureka` events at DEBUG and above while installed on this thread.
#[derive(Clone, Default)]
pub(crate) struct LogCapture {
    events: Arc<Mutex<Vec<Logged>>>,
}

impl LogCapture {
    /// Installs a capture as this thread's default subscriber until the guard is dropped.
    pub(crate) fn install() -> (LogCapture, tracing::subscriber::DefaultGuard) {
        use tracing_subscriber::layer::SubscriberExt;
        let capture = LogCapture::default();
        let filter = tracing_subscriber::filter::Targets::new()
            .with_target("feign_eureka", tracing::Level::DEBUG);
        let subscriber = tracing_subscriber::registry()
            .with(filter)
            .with(capture.clone());
        let guard = tracing::subscriber::set_default(subscriber);
        (capture, guard)
    }

    pub(crate) fn events(&self) -> Vec<Logged> {
        self.events.lock().unwrap().clone()
    }

    /// The events at `level` whose message is `message`.
    pub(crate) fn matching(&self, level: tracing::Level, message: &str) -> Vec<Logged> {
        self.events()
            .into_iter()
            .filter(|e| e.level == level && e.message == message)
            .collect()
    }
}

struct FieldVisitor<'a>(&'a mut Logged);

impl tracing::field::Visit for FieldVisitor<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.message = format!("{value:?}");
        } else {
            self.0
                .fields
                .insert(field.name().to_owned(), format!("{value:?}"));
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.record_debug(field, &format_args!("{value}"));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for LogCapture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut logged = Logged {
            at: Instant::now(),
            level: *event.metadata().level(),
            message: String::new(),
            fields: BTreeMap::new(),
        };
        event.record(&mut FieldVisitor(&mut logged));
        self.events.lock().unwrap().push(logged);
    }
}
