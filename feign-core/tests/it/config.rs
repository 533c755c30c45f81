//! `Builder::config`: OpenFeign's Spring properties read from real files, checked against a
//! loopback server: timeouts, default headers and query, dismiss-404, logger level, retryer,
//! precedence, and errors naming the key and the file.

use std::time::Duration;

use axum::routing::{any, get};
use axum::Router;
use feign_core::config::{Config, ConfigError};
use feign_core::{feign_client, Error};
use feign_test_support::{Captured, Order, Server, TempDir};
use serde_json::Value;

#[feign_client("order-service", path = "/api")]
trait Orders {
    #[get("/echo")]
    async fn echo(&self) -> Result<Value, Error>;

    #[get("/echo?page=7")]
    async fn echo_page(&self) -> Result<Value, Error>;

    #[get("/slow")]
    async fn slow(&self) -> Result<String, Error>;

    #[delete("/missing")]
    async fn remove(&self) -> Result<(), Error>;

    #[get("/missing")]
    async fn missing_value(&self) -> Result<Value, Error>;

    #[get("/missing")]
    async fn missing_text(&self) -> Result<String, Error>;

    #[get("/missing")]
    async fn missing_order(&self) -> Result<Order, Error>;

    #[get("/unavailable")]
    async fn unavailable(&self) -> Result<String, Error>;
}

/// Echoes the query and the `x-` headers as JSON; `/slow` answers after 2 s; `/missing` is an
/// empty 404; `/unavailable` a 503.
fn router() -> Router {
    Router::new()
        .route(
            "/api/echo",
            get(|uri: http::Uri, headers: http::HeaderMap| async move {
                let mut seen = serde_json::Map::new();
                for name in headers.keys().filter(|n| n.as_str().starts_with("x-")) {
                    let values: Vec<Value> = headers
                        .get_all(name)
                        .iter()
                        .map(|v| Value::from(v.to_str().unwrap()))
                        .collect();
                    seen.insert(name.to_string(), Value::Array(values));
                }
                axum::Json(serde_json::json!({
                    "query": uri.query().unwrap_or_default(),
                    "headers": seen,
                }))
            }),
        )
        .route(
            "/api/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                "late"
            }),
        )
        .route(
            "/api/missing",
            any(|| async { http::StatusCode::NOT_FOUND }),
        )
        .route(
            "/api/unavailable",
            get(|| async { http::StatusCode::SERVICE_UNAVAILABLE }),
        )
}

fn application_yml(url: &str) -> String {
    format!(
        r#"
spring:
  application:
    name: shop
  cloud:
    openfeign:
      client:
        config:
          default:
            connect-timeout: 1000
            read-timeout: 5000
            logger-level: basic
            default-request-headers:
              X-Team: [core]
              X-Region: eu
            default-query-parameters:
              source: feign
          order-service:
            url: {url}
            readTimeout: PT0.5S
            default-request-headers:
              X-Team:
                - orders
                - shop
            dismiss404: true
            retryer: feign.Retryer.NEVER_RETRY
          other-service:
            read-timeout: 1
"#
    )
}

#[tokio::test(start_paused = true)]
async fn file_settings_reach_the_server() {
    let server = Server::start(router()).await;
    let dir = TempDir::new("reach");
    let path = dir.write("application.yml", &application_yml(&server.url()));
    let config = Config::from_file(&path).unwrap();
    let orders = OrdersClient::builder()
        .default_header("X-Region", "code-default")
        .default_header("X-Code", "kept")
        .config(&config)
        .unwrap()
        .build()
        .unwrap();

    let echo = orders.echo().await.unwrap();
    assert_eq!(echo["query"], "source=feign");
    assert_eq!(
        echo["headers"]["x-team"],
        serde_json::json!(["orders", "shop"]),
        "the client's list replaces the default's"
    );
    assert_eq!(
        echo["headers"]["x-region"],
        serde_json::json!(["eu"]),
        "the file replaces the code default"
    );
    assert_eq!(echo["headers"]["x-code"], serde_json::json!(["kept"]));
    let page = orders.echo_page().await.unwrap();
    assert_eq!(page["query"], "page=7&source=feign");

    // read-timeout: PT0.5S from the client section, over the default's 5000.
    let err = orders.slow().await.unwrap_err();
    assert!(err.is_timeout(), "{err}");

    // dismiss404: the 404 reaches the decoder.
    orders.remove().await.unwrap();
    assert_eq!(orders.missing_value().await.unwrap(), Value::Null);
    assert_eq!(orders.missing_text().await.unwrap(), "");
    let err = orders.missing_order().await.unwrap_err();
    assert!(err.is_decode(), "an empty body is no Order: {err}");

    // retryer: NEVER_RETRY, so one attempt at the 503.
    let before = server.request_count();
    let err = orders.unavailable().await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(server.request_count(), before + 1);
}

#[tokio::test(start_paused = true)]
async fn code_defaults_hold_without_the_file_and_setters_after_config_win() {
    let server = Server::start(router()).await;
    let orders = OrdersClient::builder()
        .url(server.url())
        .config(&Config::new())
        .unwrap()
        .build()
        .unwrap();
    // The code default read timeout (60 s) outlasts the 2 s server.
    assert_eq!(orders.slow().await.unwrap(), "late");
    let err = orders.remove().await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::NOT_FOUND));
    // Retryer::default: five attempts at the 503.
    let before = server.request_count();
    orders.unavailable().await.unwrap_err();
    assert_eq!(server.request_count(), before + 5);

    let config = Config::from_yaml_str(&application_yml(&server.url()), "application.yml").unwrap();
    let orders = OrdersClient::builder()
        .config(&config)
        .unwrap()
        .options(feign_core::Options::new().read_timeout(Duration::from_secs(10)))
        .dismiss_404(false)
        .build()
        .unwrap();
    assert_eq!(orders.slow().await.unwrap(), "late");
    assert!(orders.remove().await.is_err());
}

#[tokio::test(start_paused = true)]
async fn environment_overrides_the_file_and_per_client_overrides_default() {
    let server = Server::start(router()).await;
    let dir = TempDir::new("env");
    let path = dir.write(
        "application.properties",
        &format!(
            "feign.client.config.default.readTimeout=100\n\
             feign.client.config.default.default-query-parameters.source=default\n\
             feign.client.config.order-service.url={}\n\
             feign.client.config.order-service.default-query-parameters.source=file\n",
            server.url()
        ),
    );
    let config = Config::from_file(&path).unwrap().with_env_vars([
        (
            "SPRING_CLOUD_OPENFEIGN_CLIENT_CONFIG_ORDERSERVICE_READTIMEOUT",
            "3s",
        ),
        ("UNRELATED", "x"),
    ]);
    let orders = OrdersClient::builder()
        .config(&config)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(orders.echo().await.unwrap()["query"], "source=file");
    assert_eq!(
        orders.slow().await.unwrap(),
        "late",
        "the environment's 3 s beats the file's 100 ms"
    );
}

#[test]
fn load_from_reads_yaml_and_properties_with_properties_winning() {
    let dir = TempDir::new("load");
    dir.write(
        "application.yml",
        "feign:\n  client:\n    config:\n      order-service:\n        url: http://127.0.0.1:1\n        logger-level: FULL\n",
    );
    dir.write(
        "application.properties",
        "feign.client.config.order-service.logger-level=HEADERS\n",
    );
    let config = Config::load_from(&dir.0).unwrap();
    let builder = OrdersClient::builder().config(&config).unwrap();
    let debug = format!("{builder:?}");
    assert!(debug.contains("log_level: Headers"), "{debug}");
    assert!(debug.contains("http://127.0.0.1:1"), "{debug}");
}

fn config_error(text: &str, file: &str) -> String {
    let dir = TempDir::new("err");
    let path = dir.write(file, text);
    let config = Config::from_file(&path).unwrap();
    let err = OrdersClient::builder().config(&config).unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "names the file: {message}"
    );
    message
}

#[test]
fn wrong_keys_and_values_are_errors_naming_key_and_file() {
    for (text, key, reason) in [
        (
            "feign.client.config.default.read-timout=5",
            "feign.client.config.default.read-timout",
            "unknown property",
        ),
        (
            "feign.client.config.order-service.read-timeout=soon",
            "feign.client.config.order-service.read-timeout",
            "expected a duration",
        ),
        (
            "feign.client.config.order-service.connect-timeout=0",
            "feign.client.config.order-service.connect-timeout",
            "greater than zero",
        ),
        (
            "spring.cloud.openfeign.client.config.default.logger-level=LOUD",
            "spring.cloud.openfeign.client.config.default.logger-level",
            "expected one of NONE, BASIC, HEADERS, FULL",
        ),
        (
            "spring.cloud.openfeign.client.config.default.retryer=com.example.MyRetryer",
            "spring.cloud.openfeign.client.config.default.retryer",
            "feign.Retryer.NEVER_RETRY",
        ),
        (
            "spring.cloud.openfeign.client.config.default.error-decoder=com.example.Decoder",
            "spring.cloud.openfeign.client.config.default.error-decoder",
            "Builder::error_decoder",
        ),
        (
            "spring.cloud.openfeign.client.config.default.dismiss404=maybe",
            "spring.cloud.openfeign.client.config.default.dismiss404",
            "expected true or false",
        ),
        (
            "spring.cloud.openfeign.client.refresh-enabled=maybe",
            "spring.cloud.openfeign.client.refresh-enabled",
            "expected true or false",
        ),
        (
            "spring.cloud.openfeign.client.config.default.default-request-headers=x",
            "spring.cloud.openfeign.client.config.default.default-request-headers",
            "map",
        ),
        (
            "feign.client.config.default.url=${missing.url}",
            "feign.client.config.default.url",
            "placeholder",
        ),
    ] {
        let message = config_error(text, "application.properties");
        assert!(
            message.starts_with(&format!("`{key}` in ")),
            "{text}: {message}"
        );
        assert!(message.contains(reason), "{text}: {message}");
    }
    let message = config_error(
        "feign:\n  client:\n    config:\n      order-service:\n        readTimeout: 5 minutes\n",
        "application.yml",
    );
    assert!(
        message.starts_with("`feign.client.config.order-service.readTimeout` in "),
        "{message}"
    );
    // Another client's section is checked, not applied.
    let other = Config::new().set("feign.client.config.billing.read-timeout", "250");
    let builder = OrdersClient::builder().config(&other).unwrap();
    assert!(
        format!("{builder:?}").contains("read_timeout: 60s"),
        "{builder:?}"
    );
    let err = OrdersClient::builder()
        .config(&Config::new().set("feign.client.config.billing.read-timeout", "soon"))
        .unwrap_err();
    assert!(err.is_config(), "{err:?}");
    let cause = err.downcast_ref::<ConfigError>().unwrap();
    assert_eq!(
        cause.key(),
        Some("feign.client.config.billing.read-timeout")
    );
}

#[test]
fn environment_errors_name_the_variable() {
    let config = Config::new().with_env_vars([(
        "SPRING_CLOUD_OPENFEIGN_CLIENT_CONFIG_DEFAULT_READTIMEOUT",
        "later",
    )]);
    let err = OrdersClient::builder().config(&config).unwrap_err();
    let cause = std::error::Error::source(&err)
        .and_then(|source| source.downcast_ref::<ConfigError>())
        .unwrap();
    assert_eq!(
        cause.origin(),
        "environment variable SPRING_CLOUD_OPENFEIGN_CLIENT_CONFIG_DEFAULT_READTIMEOUT"
    );
}

#[test]
fn an_invalid_default_header_fails_the_build() {
    let config = Config::new().set(
        "feign.client.config.default.default-request-headers.X-Bad",
        "a\u{7f}b",
    );
    let err = OrdersClient::builder()
        .url("http://127.0.0.1:1")
        .config(&config)
        .unwrap()
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("X-Bad"), "{err}");
}

#[tokio::test(flavor = "current_thread")]
async fn logger_level_from_the_file_decides_what_is_logged() {
    let (captured, _guard) = Captured::install();
    let server = Server::start(router()).await;
    let logs = || captured.text();

    let quiet = Config::new()
        .set("feign.client.config.order-service.url", server.url())
        .set("feign.client.config.order-service.logger-level", "NONE");
    let orders = OrdersClient::builder()
        .config(&quiet)
        .unwrap()
        .build()
        .unwrap();
    orders.echo().await.unwrap();
    assert!(!logs().contains("--> GET"), "{}", logs());

    let headers = quiet.set("feign.client.config.order-service.logger-level", "headers");
    let orders = OrdersClient::builder()
        .default_header("X-Shown", "visible")
        .config(&headers)
        .unwrap()
        .build()
        .unwrap();
    orders.echo().await.unwrap();
    let logged = logs();
    assert!(logged.contains("--> GET"), "{logged}");
    assert!(logged.contains("visible"), "headers are logged: {logged}");
}
