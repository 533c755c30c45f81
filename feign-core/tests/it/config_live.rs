//! `Builder::live_config`: clients that follow `application.yml` as it changes
//! (`spring.cloud.openfeign.client.refresh-enabled`), against loopback servers: the read timeout
//! changed under a loop of calls, a bad value kept out, the URL, a default header and the
//! circuit breaker changed, the breaker's state kept across an unrelated change, the layers kept
//! with their state.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use feign_core::config::LiveConfig;
use feign_core::layer::CallRequest;
use feign_core::{feign_client, Error};
use feign_test_support::{recording_server, Captured, Server, TempDir};
use tracing::Level;

#[feign_client("order-service", path = "/api")]
trait Orders {
    #[get("/slow")]
    async fn slow(&self) -> Result<String, Error>;

    #[get("/fail")]
    async fn fail(&self) -> Result<String, Error>;
}

/// How long `/api/slow` takes to answer: between the timeouts the tests switch between.
const LATENCY: Duration = Duration::from_millis(500);

/// `/api/slow` answers after [`LATENCY`]; `/api/fail` is a 503.
async fn server() -> Server {
    Server::start(
        Router::new()
            .route(
                "/api/slow",
                get(|| async {
                    tokio::time::sleep(LATENCY).await;
                    "slow"
                }),
            )
            .route(
                "/api/fail",
                get(|| async { http::StatusCode::SERVICE_UNAVAILABLE }),
            ),
    )
    .await
}

/// A refreshable client section for `url`, one attempt per call, with `client` and `extra`
/// appended (`client` indented under the client's section).
fn application_yml(url: &str, client: &str, extra: &str) -> String {
    format!(
        "spring.cloud.openfeign.client:\n  refresh-enabled: true\n  config:\n    order-service:\n      url: {url}\n      retryer: feign.Retryer.NEVER_RETRY\n{client}{extra}"
    )
}

fn read_timeout(ms: &str) -> String {
    format!("      read-timeout: {ms}\n")
}

/// One call of the loop: when it started, when it ended, how.
struct Outcome {
    started: Instant,
    ended: Instant,
    result: Result<String, Error>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_read_timeout_changed_in_the_file_applies_to_the_next_calls_and_spares_those_in_flight()
{
    let server = server().await;
    let dir = TempDir::new("live-read-timeout");
    let file = dir.write(
        "application.yml",
        &application_yml(&server.url(), &read_timeout("30000"), ""),
    );
    let live = LiveConfig::from_files([&file]).unwrap();
    let _watch = live.watch(Duration::from_millis(20)).unwrap();
    let client = OrdersClient::builder().live_config(&live).build().unwrap();

    // Four callers call in a loop until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let client = client.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    let started = Instant::now();
                    let result = client.slow().await;
                    outcomes.push(Outcome {
                        started,
                        ended: Instant::now(),
                        result,
                    });
                }
                outcomes
            })
        })
        .collect();

    // Calls are in flight under the 30 s timeout when the file changes to 100 ms.
    while server.request_count() < 4 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let version = live.version();
    let written = Instant::now();
    std::fs::write(
        &file,
        application_yml(&server.url(), &read_timeout("100"), ""),
    )
    .unwrap();
    tokio::time::timeout(Duration::from_secs(30), live.changed_after(version))
        .await
        .expect("the watch sees the change");
    let seen = Instant::now();
    // Long enough for every caller to make a few calls under the new timeout.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::SeqCst);
    let mut outcomes = Vec::new();
    for caller in callers {
        outcomes.extend(caller.await.unwrap());
    }

    let before: Vec<&Outcome> = outcomes.iter().filter(|o| o.started < written).collect();
    let after: Vec<&Outcome> = outcomes.iter().filter(|o| o.started > seen).collect();
    assert!(
        before.iter().any(|o| o.ended > seen),
        "some call started before the change ended after it"
    );
    for outcome in &before {
        assert_eq!(
            outcome.result.as_deref().unwrap(),
            "slow",
            "a call in flight keeps the timeout it started with"
        );
    }
    assert!(after.len() >= 4, "calls after the change: {}", after.len());
    for outcome in &after {
        let error = outcome.result.as_ref().unwrap_err();
        assert!(error.is_timeout(), "the new timeout applies: {error}");
        assert!(outcome.ended - outcome.started < LATENCY);
    }
    // Between the write and the notification a call has either timeout, and nothing else.
    for outcome in &outcomes {
        if let Err(error) = &outcome.result {
            assert!(error.is_timeout(), "{error}");
        }
    }
}

#[tokio::test]
async fn a_value_that_does_not_bind_is_logged_with_its_key_and_file_and_the_old_one_stays() {
    let (logs, _guard) = Captured::install();
    let server = server().await;
    let dir = TempDir::new("live-bad-value");
    let file = dir.write(
        "application.yml",
        &application_yml(&server.url(), &read_timeout("100"), ""),
    );
    let live = LiveConfig::from_files([&file]).unwrap();
    let client = OrdersClient::builder().live_config(&live).build().unwrap();
    assert!(client.slow().await.unwrap_err().is_timeout());

    // Parses, but the client cannot bind it: logged, and the 100 ms timeout stays (not the
    // 60 s default, under which the call would succeed).
    std::fs::write(
        &file,
        application_yml(&server.url(), &read_timeout("soon"), ""),
    )
    .unwrap();
    assert!(live.reload().unwrap());
    let text = logs.text();
    assert!(
        text.contains("new properties not applied, the client keeps its settings: `spring.cloud.openfeign.client.config.order-service.read-timeout` in ")
            && text.contains("application.yml: expected a duration"),
        "{text}"
    );
    assert!(client.slow().await.unwrap_err().is_timeout());

    // Does not parse: the properties themselves stay, the file is named.
    std::fs::write(&file, "spring.cloud.openfeign.client: [unclosed\n").unwrap();
    let error = live.reload().unwrap_err();
    assert!(error.origin().ends_with("application.yml"), "{error}");
    let kept = logs
        .events()
        .into_iter()
        .filter(|e| e.level == Level::ERROR && e.message.starts_with("configuration not reloaded"))
        .count();
    assert_eq!(kept, 1, "{}", logs.text());
    assert!(client.slow().await.unwrap_err().is_timeout());

    // Mended: applied.
    std::fs::write(
        &file,
        application_yml(&server.url(), &read_timeout("10s"), ""),
    )
    .unwrap();
    assert!(live.reload().unwrap());
    assert_eq!(client.slow().await.unwrap(), "slow");
}

#[tokio::test]
async fn the_url_and_a_default_header_change_on_reload() {
    let (first, first_seen) = recording_server(|_: &_| "first").await;
    let (second, second_seen) = recording_server(|_: &_| "second").await;
    let header = |value: &str| format!("      default-request-headers:\n        X-Env: {value}\n");
    let dir = TempDir::new("live-url");
    let file = dir.write(
        "application.yml",
        &application_yml(&first, &header("blue"), ""),
    );
    let live = LiveConfig::from_files([&file]).unwrap();
    let client = OrdersClient::builder().live_config(&live).build().unwrap();
    assert_eq!(client.slow().await.unwrap(), "first");
    assert_eq!(first_seen.only().header("x-env"), Some("blue"));

    std::fs::write(&file, application_yml(&second, &header("green"), "")).unwrap();
    assert!(live.reload().unwrap());
    assert_eq!(live.version(), 1);
    assert_eq!(client.slow().await.unwrap(), "second");
    assert_eq!(second_seen.only().header("x-env"), Some("green"));
    assert_eq!(first_seen.len(), 1);

    // The same properties again: no change, no new version.
    assert!(!live.reload().unwrap());
    assert_eq!(live.version(), 1);
}

#[tokio::test]
async fn without_refresh_enabled_the_client_keeps_the_properties_it_was_built_with() {
    let (first, _) = recording_server(|_: &_| "first").await;
    let (second, _) = recording_server(|_: &_| "second").await;
    let yml =
        |url: &str| format!("spring.cloud.openfeign.client.config.order-service.url: {url}\n");
    let dir = TempDir::new("live-off");
    let file = dir.write("application.yml", &yml(&first));
    let live = LiveConfig::from_files([&file]).unwrap();
    let client = OrdersClient::builder().live_config(&live).build().unwrap();

    std::fs::write(&file, yml(&second)).unwrap();
    assert!(live.reload().unwrap());
    assert_eq!(client.slow().await.unwrap(), "first");
}

/// The client at `url` with a default header and Resilience4j's breaker: a window of
/// `window` calls, opening at 50 % failures.
fn breaker_yml(url: &str, window: u32, header: &str) -> String {
    application_yml(
        url,
        &format!("      default-request-headers.X-Env: {header}\n"),
        &format!(
            "spring.cloud.openfeign.circuitbreaker.enabled: true\nresilience4j.circuitbreaker.instances.order-service:\n  sliding-window-size: {window}\n  minimum-number-of-calls: {window}\n  failure-rate-threshold: 50\n  wait-duration-in-open-state: 60s\n"
        ),
    )
}

#[tokio::test]
async fn breaker_settings_change_on_reload_and_its_state_survives_other_changes() {
    let server = server().await;
    let dir = TempDir::new("live-breaker");
    let yml = |window: u32, header: &str| breaker_yml(&server.url(), window, header);
    let file = dir.write("application.yml", &yml(100, "a"));
    let live = LiveConfig::from_files([&file]).unwrap();
    let client = OrdersClient::builder().live_config(&live).build().unwrap();
    for _ in 0..4 {
        let error = client.fail().await.unwrap_err();
        assert_eq!(error.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    }

    // A window of 2: two failures open the breaker.
    std::fs::write(&file, yml(2, "a")).unwrap();
    assert!(live.reload().unwrap());
    for _ in 0..2 {
        assert!(!client.fail().await.unwrap_err().is_circuit_open());
    }
    assert!(client.fail().await.unwrap_err().is_circuit_open());
    let before = server.request_count();

    // A header changes, the breaker's settings do not: it stays open.
    std::fs::write(&file, yml(2, "b")).unwrap();
    assert!(live.reload().unwrap());
    assert!(client.fail().await.unwrap_err().is_circuit_open());
    assert_eq!(server.request_count(), before);
}

/// A layer whose every service counts the calls it saw in a counter of its own, made when the
/// layer wraps the call: the counters it made tell whether a client wrapped its call again.
#[derive(Clone, Default)]
struct Counting {
    made: Arc<std::sync::Mutex<Vec<Arc<AtomicUsize>>>>,
}

impl<S> tower::Layer<S> for Counting {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Counted<S> {
        let counter = Arc::new(AtomicUsize::new(0));
        self.made.lock().unwrap().push(counter.clone());
        Counted { inner, counter }
    }
}

/// A service of [`Counting`]: counts each call, then passes it on.
#[derive(Clone)]
struct Counted<S> {
    inner: S,
    counter: Arc<AtomicUsize>,
}

impl<S: tower::Service<CallRequest>> tower::Service<CallRequest> for Counted<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: CallRequest) -> S::Future {
        self.counter.fetch_add(1, Ordering::SeqCst);
        self.inner.call(request)
    }
}

#[tokio::test]
async fn a_reload_keeps_the_layers_and_their_state() {
    let (first, _) = recording_server(|_: &_| "first").await;
    let (second, _) = recording_server(|_: &_| "second").await;
    let dir = TempDir::new("live-layers");
    let file = dir.write("application.yml", &application_yml(&first, "", ""));
    let live = LiveConfig::from_files([&file]).unwrap();
    let counting = Counting::default();
    let client = OrdersClient::builder()
        .layer(counting.clone())
        .live_config(&live)
        .build()
        .unwrap();
    assert_eq!(client.slow().await.unwrap(), "first");

    std::fs::write(&file, application_yml(&second, "", "")).unwrap();
    assert!(live.reload().unwrap());
    assert_eq!(client.slow().await.unwrap(), "second");

    let made = counting.made.lock().unwrap();
    assert_eq!(
        made.len(),
        1,
        "the call was wrapped once, not again on reload"
    );
    assert_eq!(
        made[0].load(Ordering::SeqCst),
        2,
        "one layer state saw both calls"
    );
}
