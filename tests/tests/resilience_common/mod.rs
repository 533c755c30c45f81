//! For the `resilience_*` tests: a loopback service whose answers the test steers, and a look
//! into the metrics recorded by a `DebuggingRecorder`.

#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::any;
use axum::Router;
use metrics_util::debugging::{DebugValue, Snapshotter};
use tokio::sync::watch;

/// What the service saw and how it answers.
#[derive(Clone)]
pub struct Service {
    /// Requests received.
    pub requests: Arc<AtomicUsize>,
    /// Requests being answered right now, and the most seen at once.
    pub in_flight: Arc<AtomicUsize>,
    pub max_in_flight: Arc<AtomicUsize>,
    /// `/calls/auto` fails while this is above zero, counting down.
    pub failures_left: Arc<AtomicUsize>,
    /// `/calls/hold` waits until this turns true.
    pub release: watch::Sender<bool>,
}

impl Service {
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Serves `/calls/{mode}` (any method) on 127.0.0.1: `ok` → 200, `fail` → 503, `missing` → 404,
/// `auto` → 503 while `failures_left` lasts then 200, `hold` → 200 once released, `hang` →
/// never answers.
pub async fn service() -> (String, Service) {
    let service = Service {
        requests: Arc::default(),
        in_flight: Arc::default(),
        max_in_flight: Arc::default(),
        failures_left: Arc::default(),
        release: watch::channel(false).0,
    };
    let app = Router::new()
        .route("/calls/{mode}", any(answer))
        .with_state(service.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    (format!("http://{address}"), service)
}

async fn answer(State(service): State<Service>, Path(mode): Path<String>) -> (StatusCode, String) {
    service.requests.fetch_add(1, Ordering::SeqCst);
    let now = service.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    service.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let status = match mode.as_str() {
        "ok" => StatusCode::OK,
        "fail" => StatusCode::SERVICE_UNAVAILABLE,
        "missing" => StatusCode::NOT_FOUND,
        "auto" => {
            let failed = service
                .failures_left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if failed {
                StatusCode::SERVICE_UNAVAILABLE
            } else {
                StatusCode::OK
            }
        }
        "hold" => {
            let mut release = service.release.subscribe();
            let _ = release.wait_for(|released| *released).await;
            StatusCode::OK
        }
        "hang" => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            StatusCode::OK
        }
        _ => StatusCode::BAD_REQUEST,
    };
    service.in_flight.fetch_sub(1, Ordering::SeqCst);
    (status, mode)
}

/// A loopback address nothing listens on.
pub async fn closed_port() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let address = listener.local_addr().expect("local address");
    drop(listener);
    format!("http://{address}")
}

/// One recorded metric: name, sorted labels, value.
type Metric = (String, Vec<(String, String)>, f64);

/// The metrics recorded so far. Taken once per check: a snapshot drains the counters.
pub struct Recorded(Vec<Metric>);

impl Recorded {
    pub fn take(snapshotter: &Snapshotter) -> Recorded {
        Recorded(
            snapshotter
                .snapshot()
                .into_vec()
                .into_iter()
                .map(|(key, _, _, value)| {
                    let key = key.key();
                    let mut labels: Vec<(String, String)> = key
                        .labels()
                        .map(|l| (l.key().to_owned(), l.value().to_owned()))
                        .collect();
                    labels.sort_unstable();
                    let value = match value {
                        DebugValue::Counter(n) => n as f64,
                        DebugValue::Gauge(g) => g.into_inner(),
                        DebugValue::Histogram(h) => h.len() as f64,
                    };
                    (key.name().to_owned(), labels, value)
                })
                .collect(),
        )
    }

    /// The value of the metric `name` with exactly `labels`, if recorded.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let mut wanted: Vec<(String, String)> = labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        wanted.sort_unstable();
        self.0
            .iter()
            .find(|(found, labels, _)| found == name && *labels == wanted)
            .map(|(_, _, value)| *value)
    }
}
