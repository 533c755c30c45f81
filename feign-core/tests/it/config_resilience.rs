//! `Builder::config` for the circuit breaker, the bulkhead and the time limiter: Spring Cloud
//! OpenFeign's `spring.cloud.openfeign.circuitbreaker.enabled` and Resilience4j's Spring Boot
//! properties, read from real files and checked against a loopback server, and their errors.

use std::time::Duration;

use axum::extract::State;
use axum::routing::get;
use axum::Router;
use feign_core::config::Config;
use feign_core::{feign_client, CircuitBreakerConfig, Error};
use feign_test_support::{Server, TempDir};
use tokio::sync::watch;

#[feign_client("order-service", path = "/api")]
trait Orders {
    #[get("/ok")]
    async fn ok(&self) -> Result<String, Error>;

    #[get("/fail")]
    async fn fail(&self) -> Result<String, Error>;

    #[get("/hold")]
    async fn hold(&self) -> Result<String, Error>;
}

#[feign_client("billing-service", path = "/api")]
trait Billing {
    #[get("/fail")]
    async fn fail(&self) -> Result<String, Error>;
}

/// `/ok` → 200, `/fail` → 503, `/hold` → 200 once `release` turns true.
fn router(release: watch::Receiver<bool>) -> Router {
    Router::new()
        .route("/api/ok", get(|| async { "ok" }))
        .route(
            "/api/fail",
            get(|| async { http::StatusCode::SERVICE_UNAVAILABLE }),
        )
        .route(
            "/api/hold",
            get(
                |State(mut release): State<watch::Receiver<bool>>| async move {
                    let _ = release.wait_for(|released| *released).await;
                    "released"
                },
            ),
        )
        .with_state(release)
}

async fn server() -> (Server, watch::Sender<bool>) {
    let (release, receiver) = watch::channel(false);
    (Server::start(router(receiver)).await, release)
}

/// Both clients at `url`, one attempt per call; `resilience` appended.
fn application_yml(url: &str, resilience: &str) -> String {
    format!(
        r#"
feign.client.config:
  default:
    url: {url}
    retryer: feign.Retryer.NEVER_RETRY
{resilience}"#
    )
}

const BREAKERS: &str = r#"
spring.cloud.openfeign.circuitbreaker:
  enabled: true
  group.enabled: true
resilience4j.circuitbreaker:
  configs:
    default:
      sliding-window-type: COUNT_BASED
      sliding-window-size: 5
      minimum-number-of-calls: 5
      failure-rate-threshold: 50
      wait-duration-in-open-state: PT10S
      automatic-transition-from-open-to-half-open-enabled: true
    order-service:
      sliding-window-size: 4
      minimum-number-of-calls: 4
    billing-service:
      minimum-number-of-calls: 4
  instances:
    order-service:
      base-config: default
      slidingWindowSize: 3
      minimumNumberOfCalls: 3
"#;

/// Calls `fail` until the breaker refuses; the failures that reached the server.
async fn failures_until_open<F, Fut>(server: &Server, mut fail: F) -> usize
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<String, Error>>,
{
    let before = server.request_count();
    for _ in 0..20 {
        let error = fail().await.unwrap_err();
        if error.is_circuit_open() {
            return server.request_count() - before;
        }
        assert_eq!(error.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    }
    panic!("the breaker never opened");
}

#[tokio::test]
async fn a_breaker_from_the_file_opens_after_the_configured_failures() {
    let (server, _release) = server().await;
    let dir = TempDir::new("breaker");
    let path = dir.write("application.yml", &application_yml(&server.url(), BREAKERS));
    let config = Config::from_file(&path).unwrap();

    // order-service: its instance's window of 3 over its group config's 4 and the default's 5.
    let orders = orders_from(&config);
    assert_eq!(failures_until_open(&server, || orders.fail()).await, 3);
    // A breaker per method, as in Spring with or without groups.
    assert_eq!(orders.ok().await.unwrap(), "ok");

    // wait-duration-in-open-state: PT10S, then a trial call goes through.
    let before = server.request_count();
    tokio::time::pause();
    tokio::time::advance(Duration::from_secs(9)).await;
    tokio::time::resume();
    assert!(orders.fail().await.unwrap_err().is_circuit_open());
    assert_eq!(server.request_count(), before);
    tokio::time::pause();
    tokio::time::advance(Duration::from_secs(1)).await;
    tokio::time::resume();
    assert!(orders.fail().await.unwrap_err().is_status());
    assert_eq!(server.request_count(), before + 1);

    // billing-service has no instance: its group config's minimum of 4 over the default's 5.
    let billing = BillingClient::builder()
        .config(&config)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(failures_until_open(&server, || billing.fail()).await, 4);
}

fn orders_from(config: &Config) -> OrdersClient {
    OrdersClient::builder()
        .config(config)
        .unwrap()
        .build()
        .unwrap()
}

/// Ten failures in a row all reach the server.
async fn assert_no_breaker(orders: &OrdersClient) {
    for _ in 0..10 {
        assert!(orders.fail().await.unwrap_err().is_status());
    }
}

#[tokio::test]
async fn the_environment_overrides_the_file_and_the_switch_decides() {
    let (server, _release) = server().await;
    let dir = TempDir::new("breaker-env");
    let path = dir.write("application.yml", &application_yml(&server.url(), BREAKERS));
    let config = Config::from_file(&path).unwrap().with_env_vars([(
        "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_ORDERSERVICE_MINIMUMNUMBEROFCALLS",
        "2",
    )]);
    let orders = orders_from(&config);
    assert_eq!(failures_until_open(&server, || orders.fail()).await, 2);

    // Switched off in the environment: no breaker, though the code had one.
    let off = config.with_env_vars([("SPRING_CLOUD_OPENFEIGN_CIRCUITBREAKER_ENABLED", "false")]);
    let code_breaker = CircuitBreakerConfig::default().minimum_number_of_calls(1);
    let orders = OrdersClient::builder()
        .circuit_breaker(code_breaker)
        .config(&off)
        .unwrap()
        .build()
        .unwrap();
    assert_no_breaker(&orders).await;

    // Not switched on: the settings alone put no breaker around the calls...
    let unswitched = Config::from_yaml_str(
        &application_yml(&server.url(), BREAKERS).replace("enabled: true\n  group", "group"),
        "application.yml",
    )
    .unwrap();
    let orders = orders_from(&unswitched);
    assert_no_breaker(&orders).await;

    // ...but a breaker set in code takes them.
    let orders = OrdersClient::builder()
        .circuit_breaker(CircuitBreakerConfig::default())
        .config(&unswitched)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(failures_until_open(&server, || orders.fail()).await, 3);
}

/// Two held calls are admitted, a third fails at once as a full bulkhead, and once they are
/// released calls go through again.
async fn assert_two_admitted_and_the_third_shed(
    server: &Server,
    release: &watch::Sender<bool>,
    orders: &OrdersClient,
) {
    let held: Vec<_> = (0..2)
        .map(|_| {
            let orders = orders.clone();
            tokio::spawn(async move { orders.hold().await })
        })
        .collect();
    while server.request_count() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let error = orders.ok().await.unwrap_err();
    assert!(error.is_bulkhead_full(), "{error}");
    assert!(error.to_string().contains("2 calls in flight"), "{error}");
    assert_eq!(server.request_count(), 2);

    release.send_replace(true);
    for call in held {
        assert_eq!(call.await.unwrap().unwrap(), "released");
    }
    assert_eq!(orders.ok().await.unwrap(), "ok");
}

#[tokio::test]
async fn a_bulkhead_from_the_file_refuses_the_excess() {
    let (server, release) = server().await;
    let bulkheads = r#"
resilience4j.bulkhead:
  configs.default:
    max-concurrent-calls: 10
    max-wait-duration: 0
  instances.order-service:
    max-concurrent-calls: 2
"#;
    let dir = TempDir::new("bulkhead");
    let path = dir.write(
        "application.yml",
        &application_yml(&server.url(), bulkheads),
    );
    let config = Config::from_file(&path).unwrap();
    assert_two_admitted_and_the_third_shed(&server, &release, &orders_from(&config)).await;
}

#[tokio::test]
async fn an_adaptive_limit_from_the_file_sheds_the_excess_at_once() {
    let (server, release) = server().await;
    // A floor of 2 and a first window that never closes: the limit stays at 2.
    let adaptive = r#"
resilience4j.bulkhead:
  configs.default.adaptive:
    min-limit: 2
    min-samples: 1000
  instances.order-service.adaptive:
    enabled: true
    initial-limit: 4
    max-limit: 8
    sample-window: 50ms
    tolerance: 1.5
    smoothing: 0.25
    min-rtt-refresh: 30s
"#;
    let dir = TempDir::new("adaptive");
    let path = dir.write("application.yml", &application_yml(&server.url(), adaptive));
    let config = Config::from_file(&path).unwrap();
    assert_two_admitted_and_the_third_shed(&server, &release, &orders_from(&config)).await;
}

#[tokio::test]
async fn adaptive_settings_without_the_switch_leave_calls_unlimited() {
    let (server, release) = server().await;
    let adaptive = r#"
resilience4j.bulkhead.instances.order-service.adaptive:
  enabled: false
  min-limit: 1
  initial-limit: 1
"#;
    let dir = TempDir::new("adaptive-off");
    let path = dir.write("application.yml", &application_yml(&server.url(), adaptive));
    let orders = orders_from(&Config::from_file(&path).unwrap());
    let held = {
        let orders = orders.clone();
        tokio::spawn(async move { orders.hold().await })
    };
    while server.request_count() < 1 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(orders.ok().await.unwrap(), "ok");
    release.send_replace(true);
    assert_eq!(held.await.unwrap().unwrap(), "released");
}

/// A breaker, and Resilience4j time limits: 30 s for every client, 200 ms for order-service
/// (its group config), 10 ms for billing-service's instance.
const TIME_LIMITS: &str = r#"
spring.cloud.openfeign.circuitbreaker.enabled: true
resilience4j.timelimiter:
  configs:
    default:
      timeout-duration: 30s
      cancel-running-future: true
    order-service.timeout-duration: 200ms
  instances.billing-service.timeout-duration: 10
"#;

#[tokio::test]
async fn the_time_limiter_is_the_whole_calls_deadline() {
    let (server, release) = server().await;
    let dir = TempDir::new("time-limit");
    let path = dir.write(
        "application.yml",
        &application_yml(&server.url(), TIME_LIMITS),
    );
    let config = Config::from_file(&path).unwrap();
    let builder = OrdersClient::builder().config(&config).unwrap();
    assert!(
        format!("{builder:?}").contains("total_timeout: Some(200ms)"),
        "{builder:?}"
    );
    let orders = builder.build().unwrap();
    let started = tokio::time::Instant::now();
    let error = tokio::time::timeout(Duration::from_secs(5), orders.hold())
        .await
        .expect("the time limit ends the call")
        .unwrap_err();
    assert!(error.is_timeout(), "{error}");
    assert!(started.elapsed() >= Duration::from_millis(200));
    release.send_replace(true);
    assert_eq!(orders.ok().await.unwrap(), "ok");

    let billing = BillingClient::builder().config(&config).unwrap();
    assert!(
        format!("{billing:?}").contains("total_timeout: Some(10ms)"),
        "{billing:?}"
    );

    // Without a breaker, as in Spring, the limits are checked and not applied.
    let unswitched = config.set("spring.cloud.openfeign.circuitbreaker.enabled", "false");
    let builder = OrdersClient::builder().config(&unswitched).unwrap();
    assert!(
        format!("{builder:?}").contains("total_timeout: None"),
        "{builder:?}"
    );
}

#[test]
fn wrong_keys_and_values_are_errors_naming_key_and_file() {
    for (line, reason) in [
        (
            "resilience4j.circuitbreaker.configs.default.sliding-window-type=TIME_BASED",
            "TIME_BASED is not supported",
        ),
        (
            "resilience4j.circuitbreaker.configs.default.sliding-window-type=SESSION",
            "expected one of COUNT_BASED, TIME_BASED",
        ),
        (
            "resilience4j.circuitbreaker.instances.order-service.failure-rate-threshold=150",
            "over 0 and at most 100",
        ),
        (
            "resilience4j.circuitbreaker.instances.order-service.wait-duration-in-open-state=soon",
            "expected a duration",
        ),
        (
            "resilience4j.circuitbreaker.configs.default.slow-call-duration-threshold=0",
            "greater than zero",
        ),
        (
            "resilience4j.circuitbreaker.configs.default.minimum-number-of-calls=0",
            "at least 1",
        ),
        (
            "resilience4j.circuitbreaker.instances.billing.sliding-window-size=-1",
            "expected a u32",
        ),
        (
            "resilience4j.circuitbreaker.configs.default.record-exceptions=java.io.IOException",
            "not supported: the failure classifier",
        ),
        (
            "resilience4j.circuitbreaker.configs.default.automatic-transition-from-open-to-half-open-enabled=false",
            "not supported",
        ),
        (
            "resilience4j.circuitbreaker.instances.order-service.base-config=shared",
            "only `default`",
        ),
        (
            "resilience4j.circuitbreaker.configs.default.slidng-window-size=5",
            "unknown property, did you mean `resilience4j.circuitbreaker.configs.default.sliding-window-size`?",
        ),
        (
            "resilience4j.circuitbreaker.backends.order-service.sliding-window-size=5",
            "unknown property",
        ),
        (
            "resilience4j.bulkhead.instances.order-service.max-concurrent-calls=0",
            "at least 1",
        ),
        (
            "resilience4j.bulkhead.configs.default.max-wait-duration=later",
            "expected a duration",
        ),
        (
            "resilience4j.bulkhead.configs.default.max-thread-pool-size=4",
            "unknown property",
        ),
        (
            "resilience4j.bulkhead.instances.order-service.adaptive.tolerance=0.5",
            "at least 1",
        ),
        (
            "resilience4j.bulkhead.configs.default.adaptive.smoothing=2",
            "at most 1",
        ),
        (
            "resilience4j.bulkhead.instances.billing.adaptive.min-limit=0",
            "at least 1",
        ),
        (
            "resilience4j.bulkhead.configs.default.adaptive.enabled=sometimes",
            "expected true or false",
        ),
        (
            "resilience4j.bulkhead.configs.default.adaptive.algorithm=vegas",
            "unknown property",
        ),
        (
            "spring.cloud.openfeign.circuitbreaker.enabled=maybe",
            "expected true or false",
        ),
        (
            "spring.cloud.openfeign.circuitbreaker.group.enabled=sometimes",
            "expected true or false",
        ),
        (
            "feign.circuitbreaker.timeout=5",
            "unknown property",
        ),
        (
            "resilience4j.timelimiter.configs.default.timeout-duration=soon",
            "expected a duration",
        ),
        (
            "resilience4j.timelimiter.instances.order-service.timeout-duration=0",
            "greater than zero",
        ),
        (
            "resilience4j.timelimiter.instances.order-service.timeout=1s",
            "did you mean `resilience4j.timelimiter.instances.order-service.timeout-duration`?",
        ),
        (
            "resilience4j.timelimiter.configs.default.cancel-running-future=perhaps",
            "expected true or false",
        ),
        (
            "resilience4j.timelimter.configs.default.timeout-duration=1s",
            "did you mean `resilience4j.timelimiter.configs.default.timeout-duration`?",
        ),
    ] {
        let dir = TempDir::new("resilience-err");
        let path = dir.write("application.properties", line);
        let config = Config::from_file(&path).unwrap();
        let message = OrdersClient::builder().config(&config).unwrap_err().to_string();
        let key = line.split('=').next().unwrap();
        assert!(
            message.starts_with(&format!("`{key}` in {}: ", path.display())),
            "{line}: {message}"
        );
        assert!(message.contains(reason), "{line}: {message}");
    }
}
