//! The observability example, as a library so a test can run exactly what
//! `cargo run -p observability` runs.
//!
//! Two `order-service` instances on 127.0.0.1, resolved through feign-lb. The client sends a
//! bearer token from an async provider ([`BearerAuth::refreshing`]) and the caller's W3C trace
//! context ([`W3cTraceparent`]). Three calls run inside one incoming trace: two succeed, one
//! gets 503 from both instances. Then it prints what an exporter would receive: one span per
//! call named by its route, and the metrics (`http.client.request.duration`,
//! `feign.client.retries`, `loadbalancer.requests.*`), and checks them.

mod recorder;
mod spans;

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use feign_core::interceptor::{
    token_provider_fn, AccessToken, RequestId, TraceContext, W3cTraceparent,
};
use feign_core::{feign_client, BearerAuth, Error};
use feign_lb::{LoadBalancer, StaticSupplier};
use serde::{Deserialize, Serialize};
use tracing_subscriber::layer::SubscriberExt;

pub use recorder::{MemoryRecorder, SeriesKey, Value};
pub use spans::{ClosedSpan, SpanCollector};

/// What every step returns: a failed check says what it expected and what it saw.
pub type StepResult<T> = Result<T, Box<dyn StdError + Send + Sync>>;

/// The token the instances require and the provider hands out.
pub const TOKEN: &str = "observability-token";

/// The trace the calls are made in, as a server would have received it.
pub const INCOMING_TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// Ids too long to hide in a port number: none may appear in a span or a metric.
const IDS: [u64; 3] = [424242, 515151, 131313];

/// The id the instances answer with 503.
const FAILING_ID: u64 = 131313;

/// An order, as the instances return it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// The order's id.
    pub id: u64,
    /// The instance that served it.
    pub served_by: String,
}

/// The order service's HTTP API; no URL, so calls are resolved through the load balancer.
#[feign_client("order-service", path = "/api")]
#[headers("Accept: application/json")]
pub trait OrderService {
    /// One order by id.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;
}

/// Installs the span collector and the metrics recorder, once per process, before any call:
/// the metrics handles are registered on first use.
pub fn install() -> (SpanCollector, MemoryRecorder) {
    static INSTALLED: OnceLock<(SpanCollector, MemoryRecorder)> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let spans = SpanCollector::default();
            let subscriber = tracing_subscriber::registry().with(spans.clone());
            let _ = tracing::subscriber::set_global_default(subscriber);
            let metrics = MemoryRecorder::default();
            let _ = metrics::set_global_recorder(metrics.clone());
            (spans, metrics)
        })
        .clone()
}

/// What the run saw.
#[derive(Debug)]
pub struct Report {
    /// The spans of the three calls.
    pub spans: Vec<ClosedSpan>,
    /// Every metric series and its value.
    pub metrics: Vec<(SeriesKey, Value)>,
    /// The `traceparent` of every request the instances received.
    pub traceparents: Vec<String>,
    /// How often the token provider was asked.
    pub token_fetches: usize,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "== spans ==")?;
        for span in &self.spans {
            writeln!(f, "{span}")?;
        }
        writeln!(f, "== metrics ==")?;
        for ((name, labels), value) in &self.metrics {
            let labels: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            writeln!(f, "{name}{{{}}} {value}", labels.join(", "))?;
        }
        writeln!(f, "== traceparent received by the instances ==")?;
        for traceparent in &self.traceparents {
            writeln!(f, "{traceparent}")?;
        }
        write!(f, "token fetched {} time(s)", self.token_fetches)
    }
}

#[derive(Clone)]
struct Instance {
    name: String,
    traceparents: Arc<Mutex<Vec<String>>>,
}

async fn get_order(
    State(instance): State<Instance>,
    Path(id): Path<u64>,
    headers: HeaderMap,
) -> Result<Json<Order>, StatusCode> {
    if let Some(traceparent) = headers.get("traceparent").and_then(|v| v.to_str().ok()) {
        let mut seen = instance
            .traceparents
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        seen.push(traceparent.to_owned());
    }
    let authorized = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == format!("Bearer {TOKEN}"));
    if !authorized {
        return Err(StatusCode::UNAUTHORIZED);
    }
    if id == FAILING_ID {
        return Err(StatusCode::SERVICE_UNAVAILABLE);
    }
    Ok(Json(Order {
        id,
        served_by: instance.name,
    }))
}

/// Starts one instance on 127.0.0.1; it stops when the returned sender is dropped.
async fn start_instance(
    name: &str,
    traceparents: Arc<Mutex<Vec<String>>>,
) -> StepResult<(String, tokio::sync::oneshot::Sender<()>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let app = Router::new()
        .route("/api/orders/{id}", get(get_order))
        .with_state(Instance {
            name: name.to_owned(),
            traceparents,
        });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    Ok((url, stop))
}

/// Fails with `what` unless `ok`.
fn expect(ok: bool, what: impl Into<String>) -> StepResult<()> {
    if ok {
        Ok(())
    } else {
        Err(format!("expected {}", what.into()).into())
    }
}

/// Runs the calls and checks the spans and metrics they produced; `spans` and `metrics` are
/// what [`install`] returned.
pub async fn run(spans: &SpanCollector, metrics: &MemoryRecorder) -> StepResult<Report> {
    let traceparents = Arc::new(Mutex::new(Vec::new()));
    let (url_a, _stop_a) = start_instance("orders-a", traceparents.clone()).await?;
    let (url_b, _stop_b) = start_instance("orders-b", traceparents.clone()).await?;
    let balancer = LoadBalancer::builder()
        .supplier(StaticSupplier::new("order-service", [&url_a, &url_b]))
        .build();
    let token_fetches = Arc::new(AtomicUsize::new(0));
    let fetches = token_fetches.clone();
    let orders = OrderServiceClient::builder()
        .load_balancer(balancer)
        .interceptor(BearerAuth::refreshing(token_provider_fn(move || {
            fetches.fetch_add(1, Ordering::SeqCst);
            async { Ok(AccessToken::new(TOKEN, Duration::from_secs(300))) }
        })))
        .interceptor(W3cTraceparent::new())
        .interceptor(RequestId::new())
        .build()?;

    let incoming = TraceContext::parse(INCOMING_TRACEPARENT, None)?;
    let results = incoming
        .clone()
        .scope(async {
            let mut results = Vec::new();
            for id in IDS {
                results.push((id, orders.get_order(id).await));
            }
            results
        })
        .await;
    for (id, result) in &results {
        match result {
            Ok(order) => expect(order.id == *id, format!("order {id}, got {order:?}"))?,
            Err(error) => expect(
                *id == FAILING_ID && error.status() == Some(StatusCode::SERVICE_UNAVAILABLE),
                format!("order {id} to succeed, got {error}"),
            )?,
        }
    }

    let report = Report {
        spans: spans.closed(),
        metrics: metrics.snapshot(),
        traceparents: traceparents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone(),
        token_fetches: token_fetches.load(Ordering::SeqCst),
    };
    check_spans(&report.spans, &url_a, &url_b)?;
    check_metrics(&report.metrics)?;
    check_traceparents(&report.traceparents, &incoming)?;
    expect(
        report.token_fetches == 1,
        format!("one token fetch, saw {}", report.token_fetches),
    )?;
    Ok(report)
}

fn check_spans(spans: &[ClosedSpan], url_a: &str, url_b: &str) -> StepResult<()> {
    expect(spans.len() == 3, format!("3 spans, saw {}", spans.len()))?;
    let ports: Vec<&str> = [url_a, url_b]
        .iter()
        .filter_map(|u| u.rsplit(':').next())
        .collect();
    for span in spans {
        expect(
            span.name == "GET /orders/{id}",
            format!("spans named by route, saw {:?}", span.name),
        )?;
        let field = |name: &str| span.fields.get(name).map(String::as_str);
        expect(field("otel.kind") == Some("client"), "otel.kind = client")?;
        expect(
            field("url.template") == Some("/orders/{id}"),
            "url.template = /orders/{id}",
        )?;
        expect(
            field("server.port").is_some_and(|p| ports.contains(&p)),
            format!("server.port of an instance, saw {:?}", field("server.port")),
        )?;
        expect(
            field("feign.instance.id").is_some(),
            "the chosen instance on every span",
        )?;
        for (name, value) in &span.fields {
            let leaked =
                IDS.iter().any(|id| value.contains(&id.to_string())) || value.contains(TOKEN);
            expect(!leaked, format!("no id or token in {name} = {value}"))?;
        }
    }
    let failed = &spans[2];
    let field = |name: &str| failed.fields.get(name).map(String::as_str);
    expect(field("error.type") == Some("503"), "error.type = 503")?;
    expect(
        field("http.request.resend_count") == Some("1"),
        "one resend of the failing call, on the other instance",
    )?;
    Ok(())
}

/// The values of every series called `name` whose labels include `with`.
fn values<'a>(
    metrics: &'a [(SeriesKey, Value)],
    name: &str,
    with: &[(&str, &str)],
) -> Vec<&'a Value> {
    metrics
        .iter()
        .filter(|((n, labels), _)| {
            n == name
                && with
                    .iter()
                    .all(|(k, v)| labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, value)| value)
        .collect()
}

fn check_metrics(metrics: &[(SeriesKey, Value)]) -> StepResult<()> {
    let duration = "http.client.request.duration";
    let samples = |outcome: &str| -> usize {
        values(
            metrics,
            duration,
            &[("outcome", outcome), ("url.template", "/orders/{id}")],
        )
        .iter()
        .map(|v| match v {
            Value::Histogram(samples) => samples.len(),
            _ => 0,
        })
        .sum()
    };
    expect(samples("SUCCESS") == 2, "2 successful call durations")?;
    expect(samples("SERVER_ERROR") == 1, "1 failed call duration")?;
    expect(
        values(
            metrics,
            "feign.client.retries",
            &[("client", "order-service")],
        ) == vec![&Value::Counter(1)],
        "1 retry counted",
    )?;
    let lb_successes: u64 = values(metrics, "loadbalancer.requests.success", &[])
        .iter()
        .map(|v| match v {
            Value::Counter(n) => *n,
            _ => 0,
        })
        .sum();
    expect(
        lb_successes == 4,
        format!("4 balanced attempts with a response, saw {lb_successes}"),
    )?;
    let active = values(metrics, "loadbalancer.requests.active", &[]);
    expect(
        active.len() == 2 && active.iter().all(|v| **v == Value::Gauge(0.0)),
        format!("no attempt in flight on either instance, saw {active:?}"),
    )?;
    for ((name, labels), _) in metrics {
        let leaked = labels
            .values()
            .any(|v| IDS.iter().any(|id| v.contains(&id.to_string())));
        expect(
            !leaked,
            format!("no id in the labels of {name}: {labels:?}"),
        )?;
    }
    Ok(())
}

fn check_traceparents(seen: &[String], incoming: &TraceContext) -> StepResult<()> {
    expect(
        seen.len() == 4,
        format!("4 requests traced, saw {}", seen.len()),
    )?;
    let mut span_ids = BTreeMap::new();
    for traceparent in seen {
        let sent = TraceContext::parse(traceparent, None)?;
        expect(
            sent.trace_id() == incoming.trace_id(),
            format!("the incoming trace continued, saw {traceparent}"),
        )?;
        expect(
            sent.span_id() != incoming.span_id(),
            "a span id of the call's own",
        )?;
        *span_ids.entry(sent.span_id()).or_insert(0) += 1;
    }
    expect(
        span_ids.len() == 3,
        format!("one span id per call (retries share it), saw {span_ids:?}"),
    )?;
    Ok(())
}
