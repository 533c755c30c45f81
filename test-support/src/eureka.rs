//! A fake Eureka server on 127.0.0.1, for tests of `feign_eureka`'s client.
//!
//! [`FakeEureka`] answers like a Eureka server (§2 of the protocol notes): register stores the
//! instance and answers 204, heartbeats answer 200 for known instances and 404 otherwise, cancel
//! removes, `GET apps/` serves the stored registry with its reconcile hash, `GET apps/delta`
//! serves the configured delta (403 when none), `GET vips/{vip}` the instances with that VIP. Every request is recorded as a [`Recorded`], with
//! its arrival time on tokio's clock, so paused-time tests can check schedules. A [`Mode`] makes
//! it drop connections, hang, or answer a fixed status.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use feign_eureka::model::{Application, Applications, InstanceInfo};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::server::{Recorded, Recorder};

/// The keys of an instance as Eureka writes them, in its order (a registry adds `actionType`).
pub const INSTANCE_KEYS: [&str; 20] = [
    "instanceId",
    "hostName",
    "app",
    "ipAddr",
    "status",
    "overriddenStatus",
    "port",
    "securePort",
    "countryId",
    "dataCenterInfo",
    "leaseInfo",
    "metadata",
    "homePageUrl",
    "statusPageUrl",
    "healthCheckUrl",
    "vipAddress",
    "secureVipAddress",
    "isCoordinatingDiscoveryServer",
    "lastUpdatedTimestamp",
    "lastDirtyTimestamp",
];

/// How a [`FakeEureka`] answers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Answers like Eureka.
    #[default]
    Normal,
    /// Accepts connections and closes them at once, counting each as a connection attempt.
    DropConnections,
    /// Reads the request and never answers.
    Hang,
    /// Answers every request with this status and a Spring-style error body.
    Status(u16),
}

/// The body Spring Boot sends with an error status.
fn spring_error(status: u16, error: &str) -> Bytes {
    format!(
        r#"{{"timestamp":"2026-01-01T00:00:00.000+00:00","status":{status},"error":"{error}"}}"#
    )
    .into()
}

#[derive(Default)]
struct State {
    /// Registered instances by (APP, id).
    registry: BTreeMap<(String, String), InstanceInfo>,
    /// Served at `GET apps/delta` when set.
    delta: Option<String>,
    /// Served at `GET apps/` instead of the registry when set.
    full_override: Option<String>,
    mode: Mode,
    /// Status answered to heartbeats only, when set.
    heartbeat_status: Option<u16>,
    /// Gzip responses to GETs that accept it.
    gzip: bool,
    connection_attempts: Vec<Instant>,
}

impl State {
    fn registry(&self) -> Applications {
        let mut apps: BTreeMap<&str, Vec<InstanceInfo>> = BTreeMap::new();
        for ((app, _), info) in &self.registry {
            apps.entry(app).or_default().push(info.clone());
        }
        Applications::new(
            apps.into_iter()
                .map(|(name, instances)| Application::new(name, instances))
                .collect(),
        )
    }

    /// The instances whose `vipAddress` names `vip`, as Eureka answers `GET vips/{vip}`
    /// (`versions__delta` -1).
    fn vip_registry(&self, vip: &str) -> Applications {
        let mut listing = self.registry();
        for app in &mut listing.applications {
            app.instances.retain(|i| {
                i.vip_address
                    .as_deref()
                    .is_some_and(|vips| vips.split(',').any(|v| v.trim() == vip))
            });
        }
        listing.applications.retain(|app| !app.instances.is_empty());
        let mut listing = Applications::new(listing.applications);
        listing.versions_delta = -1;
        listing
    }
}

/// A running fake Eureka server. Clones share the server, which stops when the last one drops.
#[derive(Clone)]
pub struct FakeEureka {
    /// Where it listens.
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    requests: Recorder,
    _tasks: Arc<Mutex<JoinSet<()>>>,
}

impl std::fmt::Debug for FakeEureka {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeEureka")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl FakeEureka {
    /// Starts a server in [`Mode::Normal`] with an empty registry on a fresh loopback port.
    pub async fn start() -> FakeEureka {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(Mutex::new(State::default()));
        let requests = Recorder::default();
        let tasks = Arc::new(Mutex::new(JoinSet::new()));
        let (accept_state, accept_requests, conn_tasks) =
            (state.clone(), requests.clone(), tasks.clone());
        tasks.lock().expect("tasks lock").spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let mode = {
                    let mut s = accept_state.lock().expect("state lock");
                    s.connection_attempts.push(Instant::now());
                    s.mode.clone()
                };
                if mode == Mode::DropConnections {
                    drop(stream);
                    continue;
                }
                let (state, requests) = (accept_state.clone(), accept_requests.clone());
                conn_tasks.lock().expect("tasks lock").spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        handle(state.clone(), requests.clone(), req)
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        FakeEureka {
            addr,
            state,
            requests,
            _tasks: tasks,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("state lock")
    }

    /// The service URL to give the client, `http://127.0.0.1:port/eureka/`.
    pub fn url(&self) -> String {
        format!("http://{}/eureka/", self.addr)
    }

    /// Answers from now on as `mode` says (the default is [`Mode::Normal`]).
    pub fn set_mode(&self, mode: Mode) {
        self.state().mode = mode;
    }

    /// Answers heartbeats with `status` whether the instance is known or not; `None` (the
    /// default) answers 200 or 404 as Eureka does.
    pub fn set_heartbeat_status(&self, status: Option<u16>) {
        self.state().heartbeat_status = status;
    }

    /// Gzips the bodies of `GET`s that accept it (off by default).
    pub fn set_gzip(&self, gzip: bool) {
        self.state().gzip = gzip;
    }

    /// Serves `delta` at `GET apps/delta`; `None` (the default) answers 403, as a Eureka server
    /// with deltas disabled does.
    pub fn set_delta(&self, delta: Option<String>) {
        self.state().delta = delta;
    }

    /// Serves `full` at `GET apps/` instead of the registry; `None` (the default) serves the
    /// registry.
    pub fn set_full_override(&self, full: Option<String>) {
        self.state().full_override = full;
    }

    /// Puts an instance straight into the registry (as another client's registration would).
    pub fn put(&self, info: InstanceInfo) {
        let key = (info.app.clone(), info.id().to_owned());
        self.state().registry.insert(key, info);
    }

    /// Removes the instance `id` of `app` (as an eviction would).
    pub fn remove(&self, app: &str, id: &str) {
        self.state()
            .registry
            .remove(&(app.to_ascii_uppercase(), id.to_owned()));
    }

    /// Forgets every registration (as a restarted server would).
    pub fn forget_all(&self) {
        self.state().registry.clear();
    }

    /// The registry as `GET apps/` serves it (without an override).
    pub fn registry(&self) -> Applications {
        self.state().registry()
    }

    /// The registered instance `id` of `app`, if any.
    pub fn instance(&self, app: &str, id: &str) -> Option<InstanceInfo> {
        self.state()
            .registry
            .get(&(app.to_ascii_uppercase(), id.to_owned()))
            .cloned()
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.all()
    }

    /// The requests with `method` whose path starts with `path_prefix`, oldest first.
    pub fn requests_matching(&self, method: &str, path_prefix: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.is(method, path_prefix))
            .collect()
    }

    /// When each connection was accepted or dropped, on tokio's clock, oldest first.
    pub fn connection_attempts(&self) -> Vec<Instant> {
        self.state().connection_attempts.clone()
    }

    /// Waits (in virtual or real time) until `count` requests match
    /// [`requests_matching`](FakeEureka::requests_matching), polling every 10 ms, and returns
    /// them; fails the test after 10 000 polls.
    pub async fn wait_for(&self, method: &str, path_prefix: &str, count: usize) -> Vec<Recorded> {
        for _ in 0..10_000 {
            let found = self.requests_matching(method, path_prefix);
            if found.len() >= count {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!(
            "timed out waiting for {count} × {method} {path_prefix}; saw {:?}",
            self.requests()
                .iter()
                .map(|r| format!("{} {}", r.method, r.path))
                .collect::<Vec<_>>()
        );
    }
}

fn respond(status: u16, body: Bytes, headers: &[(&str, &str)]) -> Response<Full<Bytes>> {
    let mut builder = Response::builder().status(StatusCode::from_u16(status).expect("a status"));
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(Full::new(body)).expect("a response")
}

fn json_answer(state: &State, accepts_gzip: bool, json: String) -> Response<Full<Bytes>> {
    if state.gzip && accepts_gzip {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(json.as_bytes()).expect("gzip");
        let body = encoder.finish().expect("gzip");
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
    requests: Recorder,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let (parts, body) = req.into_parts();
    let recorded = crate::server::record(&requests, &parts, body).await;
    let accepts_gzip = recorded
        .header("accept-encoding")
        .is_some_and(|v| v.contains("gzip"));
    let mode = state.lock().expect("state lock").mode.clone();
    match mode {
        Mode::Hang => std::future::pending::<()>().await,
        Mode::Status(code) => {
            return Ok(respond(
                code,
                spring_error(500, "Internal Server Error"),
                &[("content-type", "application/json")],
            ));
        }
        Mode::DropConnections => {
            // A kept-alive connection from before the switch: close it without answering.
            state
                .lock()
                .expect("state lock")
                .connection_attempts
                .push(Instant::now());
            return Err(std::io::Error::other("dropping the connection"));
        }
        Mode::Normal => {}
    }
    let Some(rest) = recorded.path.strip_prefix("/eureka/") else {
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
    let mut s = state.lock().expect("state lock");
    let answer = match (recorded.method.as_str(), segments.as_slice()) {
        ("GET", ["apps"]) => {
            let json = s
                .full_override
                .clone()
                .unwrap_or_else(|| s.registry().to_json());
            json_answer(&s, accepts_gzip, json)
        }
        ("GET", ["vips", vip]) => {
            let json = s.vip_registry(vip).to_json();
            json_answer(&s, accepts_gzip, json)
        }
        ("GET", ["apps", "delta"]) => match s.delta.clone() {
            Some(delta) => json_answer(&s, accepts_gzip, delta),
            None => respond(403, Bytes::new(), &[]),
        },
        ("POST", ["apps", app]) => match InstanceInfo::from_json(&recorded.body) {
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
            let body = if status == 200 {
                Bytes::new()
            } else {
                spring_error(404, "Not Found")
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

/// An instance of `app` at `10.0.0.{n}:8080`, UP, with id `{app}-{n}` and VIP address `{app}`
/// (both lowercase).
pub fn instance(app: &str, n: u8) -> InstanceInfo {
    let mut info = InstanceInfo::new(app, format!("10.0.0.{n}"), format!("10.0.0.{n}"), 8080);
    info.instance_id = Some(format!("{}-{n}", app.to_ascii_lowercase()));
    info.vip_address = Some(app.to_ascii_lowercase());
    info
}
