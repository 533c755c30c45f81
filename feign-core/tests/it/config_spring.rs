//! A Spring user's `application.yml` as it is: the Java fixtures' files load unchanged, every
//! key under `spring.cloud.openfeign`, `feign` and `resilience4j` is bound, accepted and ignored
//! with a warning naming it, refused with a reason, or unknown with the nearest key named.

use axum::routing::get;
use axum::Router;
use feign_core::config::Config;
use feign_core::{feign_client, Error};
use feign_test_support::{Captured, Server, TempDir, SPRING_FIXTURES};
use tracing::Level;

#[feign_client("order-service")]
trait Orders {
    #[get("/orders")]
    async fn list(&self) -> Result<String, Error>;
}

fn yaml(text: &str) -> Config {
    let dir = TempDir::new("spring");
    Config::from_file(dir.write("application.yml", text)).unwrap()
}

fn warnings(captured: &Captured) -> Vec<String> {
    captured
        .events()
        .into_iter()
        .filter(|e| e.level == Level::WARN && e.target == "feign_config")
        .map(|e| e.fields["key"].clone())
        .collect()
}

#[tokio::test]
async fn the_java_fixtures_load_unchanged() {
    let server = Server::start(Router::new().route("/orders", get(|| async { "orders" }))).await;
    for path in SPRING_FIXTURES {
        let config = Config::from_file(path).unwrap();
        let orders = OrdersClient::builder()
            .url(server.url())
            .config(&config)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .build()
            .unwrap();
        assert_eq!(orders.list().await.unwrap(), "orders");
    }
}

/// Spring keys a Spring Cloud OpenFeign application carries, feign-rs's answer to each in the
/// comment.
const SPRING_YML: &str = r#"
spring.cloud.openfeign:
  client:
    decode-slash: true                 # warned: `/` is always sent as %2F
    remove-trailing-slash: false       # what happens: silent
    default-to-properties: true        # what happens: silent
    config:
      default:
        connect-timeout: 2000
        micrometer.enabled: false      # warned
  oauth2.enabled: false                # what happens: silent
  lazy-attributes-resolution: true     # warned
  compression.request.content-encoding-types: gzip   # warned
  circuitbreaker:
    enabled: true
    alphanumeric-ids.enabled: true     # warned
resilience4j:
  circuitbreaker.configs.default:
    register-health-indicator: true    # warned
    sliding-window-size: 10
  timelimiter.configs.default:
    timeout-duration: 5s
    cancel-running-future: true        # what happens: silent
  retry.instances.backend.max-attempts: 3   # warned
"#;

#[test]
fn spring_keys_feign_rs_ignores_are_warned_about_once_naming_them() {
    let (captured, _guard) = Captured::install();
    let config = yaml(SPRING_YML);
    let builder = OrdersClient::builder().config(&config).unwrap();
    assert!(
        format!("{builder:?}").contains("total_timeout: Some(5s)"),
        "{builder:?}"
    );
    // A second client from the same properties gives no warning again.
    let _second = OrdersClient::builder().config(&config).unwrap();
    let mut warned = warnings(&captured);
    warned.sort();
    assert_eq!(
        warned,
        [
            "resilience4j.circuitbreaker.configs.default.register-health-indicator",
            "resilience4j.retry.instances.backend.max-attempts",
            "spring.cloud.openfeign.circuitbreaker.alphanumeric-ids.enabled",
            "spring.cloud.openfeign.client.config.default.micrometer.enabled",
            "spring.cloud.openfeign.client.decode-slash",
            "spring.cloud.openfeign.compression.request.content-encoding-types",
            "spring.cloud.openfeign.lazy-attributes-resolution",
        ]
    );
    let decode_slash = captured
        .events()
        .into_iter()
        .find(|e| e.message.contains("decode-slash"))
        .unwrap();
    assert!(
        decode_slash
            .message
            .contains("ignored: a `/` in a path argument is always sent as %2F"),
        "{}",
        decode_slash.message
    );
}

fn config_error(text: &str) -> String {
    OrdersClient::builder()
        .config(&yaml(text))
        .unwrap_err()
        .to_string()
}

#[test]
fn siblings_of_the_client_section_are_checked() {
    let message = config_error("spring.cloud.openfeign.compresion.request.enabled: true\n");
    assert!(
        message.ends_with(
            "unknown property, did you mean `spring.cloud.openfeign.compression.request.enabled`?"
        ),
        "{message}"
    );
    let message = config_error("feign.circuitbreaker.enabld: true\n");
    assert!(
        message.ends_with("did you mean `feign.circuitbreaker.enabled`?"),
        "{message}"
    );
    let message = config_error("spring.cloud.openfeign.completely-made-up: 1\n");
    assert!(message.ends_with(": unknown property"), "{message}");
    // feign-lb's own keys under the old prefix are feign-lb's to check.
    let _checked = OrdersClient::builder()
        .config(&yaml("feign.loadbalancer.policy: random\n"))
        .unwrap();
}

#[test]
fn oauth2_is_refused_until_it_is_supported() {
    let message = config_error("spring.cloud.openfeign.oauth2.enabled: true\n");
    assert!(
        message.contains(
            "spring.cloud.openfeign.oauth2.enabled` in "
        ) && message.contains("not supported: OAuth2 is not supported yet: send tokens with BearerAuth::refreshing"),
        "{message}"
    );
    let message = config_error("spring.cloud.openfeign.oauth2.enabled: sometimes\n");
    assert!(message.contains("expected true or false"), "{message}");
}
