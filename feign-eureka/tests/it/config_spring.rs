//! A Spring user's `application.yml` as it is: the Java fixtures' files load unchanged through
//! `EurekaClientBuilder::config` and `SpringConfig`, `eureka.client.enabled: false` starts no
//! client, and every key under `eureka` is bound, accepted and ignored with a warning naming it,
//! or unknown with the nearest key named.

use feign_config::Config;
use feign_eureka::{Error, EurekaClient, SpringConfig};
use feign_test_support::eureka::FakeEureka;
use feign_test_support::{Captured, EUREKA_SERVER_YML, JAVA_SVC_YML};
use tracing::Level;

/// The keys of the `feign_config` warnings captured so far.
fn warned(captured: &Captured) -> Vec<String> {
    captured
        .events()
        .into_iter()
        .filter(|e| e.level == Level::WARN && e.target == "feign_config")
        .map(|e| e.fields["key"].clone())
        .collect()
}

#[test]
fn the_java_fixtures_load_unchanged() {
    let (captured, _guard) = Captured::install();
    let builder = SpringConfig::from_file(JAVA_SVC_YML)
        .unwrap()
        .builder()
        .unwrap();
    let debug = format!("{builder:?}");
    for expected in [
        "registry_fetch_interval: 2s",
        "replication_interval: 2s",
        "\"java-svc:8081\"",
        "http://127.0.0.1:8761/eureka/",
    ] {
        assert!(debug.contains(expected), "{expected}: {debug}");
    }
    assert_eq!(
        warned(&captured),
        ["eureka.client.initial-instance-info-replication-interval-seconds"]
    );

    let config = Config::from_file(EUREKA_SERVER_YML).unwrap();
    let builder = EurekaClient::builder().config(&config).unwrap();
    let debug = format!("{builder:?}");
    assert!(debug.contains("fetch_registry: false"), "{debug}");
    assert!(debug.contains("instance: None"), "{debug}");
    let registry: Vec<String> = warned(&captured).into_iter().skip(1).collect();
    assert_eq!(registry.len(), 8, "{registry:?}");
    assert!(
        registry.iter().all(|key| key.starts_with("eureka.server.")),
        "{registry:?}"
    );
}

#[tokio::test]
async fn eureka_client_enabled_false_starts_no_client() {
    let server = FakeEureka::start().await;
    let yaml = format!(
        "spring.application.name: orders\neureka.client:\n  enabled: false\n  service-url.defaultZone: {}\n",
        server.url()
    );
    let builder = SpringConfig::from_yaml_str(&yaml)
        .unwrap()
        .builder()
        .unwrap();
    assert!(!builder.is_enabled());
    let error = builder.start().await.unwrap_err();
    assert!(matches!(error, Error::Disabled), "{error}");
    assert_eq!(
        error.to_string(),
        "the eureka client is disabled (eureka.client.enabled: false)"
    );
    assert!(server.requests().is_empty());

    let on = SpringConfig::from_yaml_str(&yaml.replace("enabled: false", "enabled: true"))
        .unwrap()
        .builder()
        .unwrap();
    assert!(on.is_enabled());
}

#[test]
fn more_of_springs_keys_bind() {
    let yaml = "spring.application.name: orders\neureka:\n  instance.app-group-name: shop\n  client:\n    eureka-connection-idle-timeout-seconds: 45\n    transport.sessioned-client-reconnect-interval-seconds: 600\n";
    let builder = SpringConfig::from_yaml_str(yaml)
        .unwrap()
        .builder()
        .unwrap();
    let debug = format!("{builder:?}");
    for expected in [
        "app_group_name: Some(\"shop\")",
        "pool_idle_timeout: Some(45s)",
        "session_duration: 600s",
    ] {
        assert!(debug.contains(expected), "{expected}: {debug}");
    }
}

#[test]
fn a_misspelt_key_names_the_nearest_one() {
    for (text, nearest) in [
        (
            "eureka.client.registry-fetch-intervall-seconds: 5\n",
            "eureka.client.registry-fetch-interval-seconds",
        ),
        (
            "eureka.instance.metadata-mpa.zone: a\n",
            "eureka.instance.metadata-map.zone",
        ),
        ("eureka.clinet.enabled: true\n", "eureka.client.enabled"),
    ] {
        let message = SpringConfig::from_yaml_str(text)
            .unwrap()
            .builder()
            .unwrap_err()
            .to_string();
        assert!(
            message.ends_with(&format!("unknown property, did you mean `{nearest}`?")),
            "{text}: {message}"
        );
    }
}
