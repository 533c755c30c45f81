//! Call spans (names, OpenTelemetry attributes, no ids or secrets) captured by a recording
//! `tracing` layer, and W3C `traceparent` propagation, against a loopback axum server.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::Router;
use feign_core::interceptor::{TraceContext, W3cTraceparent};
use feign_core::resolve::{ChooseRequest, Chosen, Resolver};
use feign_core::{BearerAuth, Error, Retryer};
use feign_test_support::{closed_port_url, orders_server, quick_retryer, OrderClient, Server};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// One span as a subscriber saw it: its name and every field value recorded on it.
#[derive(Debug, Clone, Default)]
struct SeenSpan {
    name: String,
    fields: BTreeMap<String, String>,
}

impl SeenSpan {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }
}

/// Records every span of target `feign_core` with its fields.
#[derive(Clone, Default)]
struct Recorder {
    spans: Arc<Mutex<Vec<(Id, SeenSpan)>>>,
}

impl Recorder {
    fn spans(&self) -> Vec<SeenSpan> {
        self.spans
            .lock()
            .unwrap()
            .iter()
            .map(|(_, s)| s.clone())
            .collect()
    }

    fn only_span(&self) -> SeenSpan {
        let spans = self.spans();
        assert_eq!(spans.len(), 1, "{spans:#?}");
        spans.into_iter().next().unwrap()
    }
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_owned(),
            format!("{value:?}").replace('"', ""),
        );
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        if attrs.metadata().target() != "feign_core" {
            return;
        }
        let mut seen = SeenSpan {
            name: attrs.metadata().name().to_owned(),
            ..SeenSpan::default()
        };
        attrs.record(&mut Fields(&mut seen.fields));
        self.spans.lock().unwrap().push((id.clone(), seen));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.spans.lock().unwrap();
        if let Some((_, seen)) = spans.iter_mut().find(|(i, _)| i == id) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }
}

/// Installs a recording subscriber for the current thread (tests run on a current-thread
/// runtime, so the call and its interceptors run here).
fn record_spans() -> (Recorder, tracing::subscriber::DefaultGuard) {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    (recorder, tracing::subscriber::set_default(subscriber))
}

#[tokio::test]
async fn a_call_span_is_named_by_its_route_with_otel_attributes() {
    let server = orders_server().await;
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(BearerAuth::new("span-secret-token"))
        .build()
        .unwrap();
    let (recorder, _guard) = record_spans();

    let order = client.get_order(&987654321u64).await.unwrap();
    assert_eq!(order.id, 987654321);

    let span = recorder.only_span();
    assert_eq!(span.name, "GET /orders/{id}");
    assert_eq!(span.field("otel.name"), Some("GET /orders/{id}"));
    assert_eq!(span.field("otel.kind"), Some("client"));
    assert_eq!(span.field("http.request.method"), Some("GET"));
    assert_eq!(span.field("url.template"), Some("/orders/{id}"));
    assert_eq!(span.field("server.address"), Some("127.0.0.1"));
    let port = server.addr.port().to_string();
    assert_eq!(span.field("server.port"), Some(port.as_str()));
    assert_eq!(span.field("http.response.status_code"), Some("200"));
    assert_eq!(span.field("feign.client"), Some("order-service"));
    assert_eq!(
        span.field("feign.method_key"),
        Some("OrderService#get_order")
    );
    assert_eq!(span.field("error.type"), None);
    assert_eq!(span.field("otel.status_code"), None);
    assert_eq!(span.field("http.request.resend_count"), None);
    for value in span.fields.values() {
        assert!(!value.contains("987654321"), "the id leaked: {span:?}");
        assert!(
            !value.contains("span-secret-token"),
            "the token leaked: {span:?}"
        );
    }
}

#[tokio::test]
async fn a_failed_call_records_its_status_as_error_type_and_its_resends() {
    let server = orders_server().await;
    let client = OrderClient::builder()
        .url(server.url())
        .retryer(quick_retryer(3))
        .build()
        .unwrap();
    let (recorder, _guard) = record_spans();

    let error = client.get_item("17", "4242").await.unwrap_err();
    assert_eq!(error.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(server.request_count(), 3);

    let span = recorder.only_span();
    assert_eq!(span.name, "GET /orders/{id}/items/{item}");
    assert_eq!(span.field("http.response.status_code"), Some("503"));
    assert_eq!(span.field("error.type"), Some("503"));
    assert_eq!(span.field("otel.status_code"), Some("ERROR"));
    assert_eq!(span.field("http.request.resend_count"), Some("2"));
    assert!(
        span.fields.values().all(|v| !v.contains("4242")),
        "{span:?}"
    );
}

/// Decoding runs inside the call's span: a 200 whose body does not decode ends the span as an
/// error of type `decode`, beside its status.
#[tokio::test]
async fn a_body_that_does_not_decode_ends_the_span_as_a_decode_error() {
    let router = Router::new().route(
        "/api/orders/{id}",
        get(|| async { axum::Json(serde_json::json!({ "id": "not a number" })) }),
    );
    let server = Server::start(router).await;
    let client = OrderClient::builder().url(server.url()).build().unwrap();
    let (recorder, _guard) = record_spans();

    let error = client.get_order(&1u64).await.unwrap_err();
    assert!(error.is_decode(), "{error}");

    let span = recorder.only_span();
    assert_eq!(span.field("http.response.status_code"), Some("200"));
    assert_eq!(span.field("error.type"), Some("decode"));
    assert_eq!(span.field("otel.status_code"), Some("ERROR"));
}

#[tokio::test]
async fn a_connect_failure_records_its_kind_as_error_type() {
    let client = OrderClient::builder()
        .url(closed_port_url())
        .retryer(Retryer::never())
        .build()
        .unwrap();
    let (recorder, _guard) = record_spans();

    let error = client.get_order(&1u64).await.unwrap_err();
    assert!(error.is_connect(), "{error:?}");

    let span = recorder.only_span();
    assert_eq!(span.field("error.type"), Some("connect"));
    assert_eq!(span.field("http.response.status_code"), None);
    assert_eq!(span.field("otel.status_code"), Some("ERROR"));
}

/// Resolves every attempt to one loopback instance with a fixed id.
struct OneInstance {
    url: String,
}

impl Resolver for OneInstance {
    fn choose(&self, _request: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        Ok(Chosen::new(self.url.as_str(), "orders-7"))
    }
}

#[tokio::test]
async fn a_resolved_call_names_the_instance_it_used() {
    let server = orders_server().await;
    let client = OrderClient::name_only()
        .load_balancer(OneInstance { url: server.url() })
        .build()
        .unwrap();
    let (recorder, _guard) = record_spans();

    client.get_order(&5u64).await.unwrap();

    let span = recorder.only_span();
    assert_eq!(span.field("feign.instance.id"), Some("orders-7"));
    assert_eq!(span.field("server.address"), Some("127.0.0.1"));
}

/// Offers one instance to the first attempt and none after that.
struct OnceThenNone {
    url: String,
}

impl Resolver for OnceThenNone {
    fn choose(&self, request: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        match request.attempt {
            1 => Ok(Chosen::new(self.url.as_str(), "orders-1")),
            _ => Err(Error::no_instance(request.call.service, "none registered")),
        }
    }
}

#[tokio::test]
async fn the_last_attempt_decides_the_error_type() {
    let server = orders_server().await;
    let client = OrderClient::name_only()
        .load_balancer(OnceThenNone { url: server.url() })
        .retryer(quick_retryer(2))
        .build()
        .unwrap();
    let (recorder, _guard) = record_spans();

    let error = client.get_item("1", "2").await.unwrap_err();
    assert!(error.is_no_instance(), "{error:?}");

    let span = recorder.only_span();
    assert_eq!(span.field("error.type"), Some("no_instance"), "{span:?}");
    assert_eq!(span.field("http.response.status_code"), None);
}

#[tokio::test]
async fn no_span_is_made_when_the_subscriber_filters_info_out() {
    let server = orders_server().await;
    let client = OrderClient::builder().url(server.url()).build().unwrap();
    let recorder = Recorder::default();
    // The recorder would see any span made despite the filter (`Span::new` does not ask it).
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::filter::LevelFilter::WARN)
        .with(recorder.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    client.get_order(&5u64).await.unwrap();
    assert!(recorder.spans().is_empty(), "{:?}", recorder.spans());
}

/// A server that answers with the `traceparent` and `tracestate` it received.
async fn echo_server() -> Server {
    Server::start(Router::new().route(
        "/api/orders/{id}",
        get(|headers: HeaderMap| async move {
            let get = |name: &str| {
                headers
                    .get(name)
                    .map(|v| v.to_str().unwrap().to_owned())
                    .unwrap_or_default()
            };
            format!("{}|{}", get("traceparent"), get("tracestate"))
        }),
    ))
    .await
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Splits a received `traceparent` after checking its W3C format.
fn fields(traceparent: &str) -> (String, String, String) {
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!(parts.len(), 4, "{traceparent}");
    assert_eq!(parts[0], "00");
    assert!(is_lower_hex(parts[1], 32), "{traceparent}");
    assert!(is_lower_hex(parts[2], 16), "{traceparent}");
    assert!(is_lower_hex(parts[3], 2), "{traceparent}");
    assert_ne!(parts[1], "0".repeat(32));
    assert_ne!(parts[2], "0".repeat(16));
    (parts[1].into(), parts[2].into(), parts[3].into())
}

#[tokio::test]
async fn traceparent_continues_the_current_trace_at_the_server() {
    let server = echo_server().await;
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(W3cTraceparent::new())
        .build()
        .unwrap();
    let parent = TraceContext::parse(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
    )
    .unwrap();
    let (recorder, _guard) = record_spans();

    let echoed = parent
        .scope(async { client.get_order_text("1").await })
        .await
        .unwrap();
    let (traceparent, tracestate) = echoed.split_once('|').unwrap();
    let (trace_id, span_id, flags) = fields(traceparent);
    assert_eq!(trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_ne!(span_id, "00f067aa0ba902b7", "each hop gets its own span id");
    assert_eq!(flags, "01");
    assert_eq!(tracestate, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");

    let span = recorder.only_span();
    assert_eq!(span.field("trace_id"), Some(trace_id.as_str()));
    assert_eq!(span.field("span_id"), Some(span_id.as_str()));
}

#[tokio::test]
async fn traceparent_starts_a_new_trace_without_a_parent() {
    let server = echo_server().await;
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(W3cTraceparent::new().sample_new_traces(false))
        .build()
        .unwrap();
    let first = client.get_order_text("1").await.unwrap();
    let second = client.get_order_text("1").await.unwrap();
    let (first, state) = first.split_once('|').unwrap();
    assert_eq!(state, "");
    let (trace_a, _, flags) = fields(first);
    let (trace_b, _, _) = fields(second.split_once('|').unwrap().0);
    assert_eq!(flags, "00");
    assert_ne!(trace_a, trace_b, "unrelated calls start unrelated traces");
}

#[tokio::test]
async fn traceparent_takes_the_context_a_provider_gives() {
    let server = echo_server().await;
    let given = TraceContext::new(0xabc, 0xdef, 0).unwrap();
    let provided = given.clone();
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(W3cTraceparent::with_provider(move || {
            Some(provided.clone())
        }))
        .build()
        .unwrap();
    let echoed = client.get_order_text("1").await.unwrap();
    let (trace_id, _, flags) = fields(echoed.split_once('|').unwrap().0);
    assert_eq!(trace_id, format!("{:032x}", 0xabc));
    assert_eq!(flags, "00");
}

#[tokio::test]
async fn a_traceparent_already_on_the_request_is_kept() {
    let server = echo_server().await;
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(feign_core::interceptor::DefaultHeaders::new().header(
            "traceparent",
            "00-11111111111111111111111111111111-2222222222222222-01",
        ))
        .interceptor(W3cTraceparent::new())
        .build()
        .unwrap();
    let echoed = client.get_order_text("1").await.unwrap();
    assert_eq!(
        echoed,
        "00-11111111111111111111111111111111-2222222222222222-01|"
    );
}
