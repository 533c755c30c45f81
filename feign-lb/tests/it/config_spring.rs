//! A Spring user's `application.yml` as it is: the Java fixtures' files load unchanged through
//! `Builder::config`, and every key under `spring.cloud.loadbalancer` is bound, accepted and
//! ignored with a warning naming it, or unknown with the nearest key named.

use feign_config::Config;
use feign_lb::LoadBalancer;
use feign_test_support::{Captured, TempDir, SPRING_FIXTURES};
use tracing::Level;

fn yaml(text: &str) -> Config {
    let dir = TempDir::new("lb-spring");
    Config::from_file(dir.write("application.yml", text)).unwrap()
}

#[test]
fn the_java_fixtures_load_unchanged() {
    for path in SPRING_FIXTURES {
        let config = Config::from_file(path).unwrap();
        let built = LoadBalancer::builder()
            .static_lists([("java-svc", vec!["http://127.0.0.1:8081"])])
            .config(&config);
        assert!(built.is_ok(), "{path}: {:?}", built.err());
    }
}

const SPRING_YML: &str = r#"
spring.cloud.loadbalancer:
  enabled: false                       # warned: the balancer is on wherever it is given
  eager-load.clients: [orders]         # warned
  x-forwarded.enabled: false           # what happens: silent
  health-check:
    port: 8081                         # known: the health checks' port
    refetch-instances: true            # known
  retry.enabled: true
  clients:
    orders:
      x-forwarded.enabled: true        # warned
      health-check.repeat-health-check: false   # warned
  hint.orders: blue
"#;

#[test]
fn spring_keys_the_balancer_does_not_bind_are_warned_about_naming_them() {
    let (captured, _guard) = Captured::install();
    let config = yaml(SPRING_YML);
    LoadBalancer::builder().config(&config).unwrap().build();
    LoadBalancer::builder().config(&config).unwrap().build();
    let mut warned: Vec<String> = captured
        .events()
        .into_iter()
        .filter(|e| e.level == Level::WARN && e.target == "feign_config")
        .map(|e| e.fields["key"].clone())
        .collect();
    warned.sort();
    assert_eq!(
        warned,
        [
            "spring.cloud.loadbalancer.clients.orders.health-check.repeat-health-check",
            "spring.cloud.loadbalancer.clients.orders.x-forwarded.enabled",
            "spring.cloud.loadbalancer.eager-load.clients",
            "spring.cloud.loadbalancer.enabled",
        ],
        "each once, though two balancers read them"
    );
    let enabled = captured
        .events()
        .into_iter()
        .find(|e| {
            e.fields
                .get("key")
                .is_some_and(|k| k.ends_with(".enabled") && k.contains("loadbalancer.enabled"))
        })
        .unwrap();
    assert!(
        enabled
            .message
            .contains("ignored: the balancer is on wherever it is given to a client"),
        "{}",
        enabled.message
    );
}

#[test]
fn a_misspelt_key_names_the_nearest_one() {
    for (text, nearest) in [
        (
            "spring.cloud.loadbalancer.helth-check.interval: 5s\n",
            "spring.cloud.loadbalancer.health-check.interval",
        ),
        (
            "spring.cloud.loadbalancer.clients.Orders.retry.max-retries-on-next-instance: 2\n",
            "spring.cloud.loadbalancer.clients.Orders.retry.max-retries-on-next-service-instance",
        ),
        (
            "feign.loadbalancer.clients.orders.polcy: random\n",
            "feign.loadbalancer.clients.orders.policy",
        ),
    ] {
        let message = LoadBalancer::builder()
            .config(&yaml(text))
            .unwrap_err()
            .to_string();
        assert!(
            message.ends_with(&format!("unknown property, did you mean `{nearest}`?")),
            "{text}: {message}"
        );
    }
}
