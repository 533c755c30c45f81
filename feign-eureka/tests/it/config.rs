//! Spring property names from YAML, properties files and the environment, checked end to end:
//! the client built from them registers what they say with a loopback Eureka.

use std::time::Duration;

use feign_eureka::model::{InstanceInfo, InstanceStatus, PortInfo};
use feign_eureka::{EurekaClient, InstanceConfig, SpringConfig};
use feign_test_support::eureka::FakeEureka;
use feign_test_support::TempDir;

fn java_style_yaml(url: &str) -> String {
    format!(
        r#"
server:
  port: 8081
spring:
  application:
    name: java-style
logging:
  level:
    root: INFO
eureka:
  client:
    service-url:
      defaultZone: {url}
    registry-fetch-interval-seconds: 2
  instance:
    prefer-ip-address: true
    ip-address: 10.1.2.3
    instance-id: ${{spring.application.name}}:${{server.port}}
    lease-renewal-interval-in-seconds: 2
    lease-expiration-duration-in-seconds: 6
    metadata-map:
      zone: zone-b
      version: 2.1.0
      management.port: 9091
  server:
    enable-self-preservation: false
"#
    )
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn application_yml_values_carry_over() {
    let server = FakeEureka::start().await;
    let eureka = SpringConfig::from_yaml_str(&java_style_yaml(&server.url()))
        .unwrap()
        .builder()
        .unwrap()
        .registration_jitter(Duration::ZERO)
        .start()
        .await
        .unwrap();
    let post = server
        .wait_for("POST", "/eureka/apps/JAVA-STYLE", 1)
        .await
        .remove(0);
    let info = InstanceInfo::from_json(&post.body).unwrap();
    assert_eq!(info.id(), "java-style:8081");
    assert_eq!(info.host_name, "10.1.2.3");
    assert_eq!(info.port, PortInfo::enabled(8081));
    let lease = info.lease_info.unwrap();
    assert_eq!(
        (lease.renewal_interval_in_secs, lease.duration_in_secs),
        (2, 6)
    );
    assert_eq!(
        info.metadata.get("zone").map(String::as_str),
        Some("zone-b")
    );
    assert_eq!(
        info.metadata.get("management.port").map(String::as_str),
        Some("9091")
    );
    assert_eq!(
        info.metadata.get("version").map(String::as_str),
        Some("2.1.0")
    );
    // Heartbeats every 2 s and fetches every 2 s, as configured.
    tokio::time::sleep(Duration::from_millis(4_100)).await;
    assert_eq!(server.requests_matching("PUT", "/eureka/apps/").len(), 2);
    assert!(server.requests_matching("GET", "/eureka/apps/").len() >= 3);
    eureka.shutdown().await;
}

#[test]
fn properties_files_and_relaxed_names_work() {
    let text = "# comment\n! other comment\nspring.application.name=orders\nserver.port: 9000\n\
        eureka.client.serviceUrl.defaultZone=http://a:8761/eureka/,http://b:8761/eureka/\n\
        eureka.client.registry_fetch_interval_seconds=7\neureka.instance.preferIpAddress=true\n\
        eureka.instance.initial-status=STARTING\n";
    let config = SpringConfig::from_properties_str(text).unwrap();
    assert_eq!(
        config.get("eureka.client.service-url.defaultZone").unwrap(),
        "http://a:8761/eureka/,http://b:8761/eureka/"
    );
    let builder = config.builder().unwrap();
    let debug = format!("{builder:?}");
    assert!(debug.contains("registry_fetch_interval: 7s"), "{debug}");
    assert!(debug.contains("http://b:8761/eureka/"), "{debug}");
    assert!(debug.contains("initial_status: Starting"), "{debug}");
    assert!(debug.contains("prefer_ip_address: true"), "{debug}");
}

#[test]
fn a_wrong_key_is_an_error_naming_it() {
    for (text, key) in [
        (
            "eureka.client.registry-fetch-interval=5",
            "eureka.client.registry-fetch-interval",
        ),
        (
            "eureka.instance.prefer-ip=true",
            "eureka.instance.prefer-ip",
        ),
        (
            "eureka.client.backup-registry-impl=com.example.FileBackupRegistry",
            "eureka.client.backup-registry-impl",
        ),
        (
            "eureka.clients.fetch-registry=true",
            "eureka.clients.fetch-registry",
        ),
        (
            "eureka.client.registry-fetch-interval-seconds=soon",
            "eureka.client.registry-fetch-interval-seconds",
        ),
        (
            "eureka.instance.prefer-ip-address=maybe",
            "eureka.instance.prefer-ip-address",
        ),
        ("server.port=http", "server.port"),
        (
            "eureka.instance.initial-status=up",
            "eureka.instance.initial-status",
        ),
    ] {
        let err = SpringConfig::from_properties_str(text)
            .unwrap()
            .builder()
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("`{key}`")), "{text}: {err}");
    }
    let err = SpringConfig::from_properties_str("eureka.client.register-with-eureka=true")
        .unwrap()
        .builder()
        .unwrap_err()
        .to_string();
    assert!(err.contains("spring.application.name"), "{err}");
    // Registry settings and unrelated keys are not the client's business.
    let _ = SpringConfig::from_properties_str(
        "eureka.server.enable-self-preservation=false\nmanagement.port=1",
    )
    .unwrap()
    .builder()
    .unwrap();
    assert!(SpringConfig::from_yaml_str("a: [b").is_err());
    assert!(SpringConfig::from_properties_str("=no key").is_err());
    assert!(SpringConfig::from_properties_str("bad.escape=\\u12").is_err());
    // `key value` is a Java properties line, as in Spring.
    let spaced = SpringConfig::from_properties_str("eureka.instance.hostname h.internal").unwrap();
    assert_eq!(
        spaced.get("eureka.instance.hostname").as_deref(),
        Some("h.internal")
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn environment_variables_override_the_file() {
    let server = FakeEureka::start().await;
    let env = [
        ("EUREKA_CLIENT_SERVICEURL_DEFAULTZONE", server.url()),
        ("EUREKA_INSTANCE_METADATAMAP_ZONE", "zone-env".to_owned()),
        ("EUREKA_INSTANCE_INSTANCEID", "env-id".to_owned()),
        ("SPRING_APPLICATION_NAME", "env-svc".to_owned()),
        ("PATH", "/usr/bin".to_owned()),
    ];
    let eureka = SpringConfig::from_properties_str("spring.application.name=file-svc\neureka.instance.ip-address=10.9.9.9\neureka.instance.hostname=h.internal\neureka.client.service-url.defaultZone=http://127.0.0.1:1/eureka/")
        .unwrap()
        .merge_env_vars(env.map(|(k, v)| (k.to_owned(), v)))
        .builder()
        .unwrap()
        .registration_jitter(Duration::ZERO)
        .start()
        .await
        .unwrap();
    let post = server
        .wait_for("POST", "/eureka/apps/ENV-SVC", 1)
        .await
        .remove(0);
    let info = InstanceInfo::from_json(&post.body).unwrap();
    assert_eq!(info.id(), "env-id");
    assert_eq!(
        info.metadata.get("zone").map(String::as_str),
        Some("zone-env")
    );
    assert_eq!(info.status, InstanceStatus::Up);
    assert_eq!(
        info.host_name, "h.internal",
        "file values the environment does not set stay"
    );
    let unreachable = server.requests().len();
    eureka.shutdown().await;
    assert_eq!(
        server.requests().len(),
        unreachable + 1,
        "only the environment's server is used"
    );
}

#[test]
fn discovery_only_without_an_application_name() {
    let builder = SpringConfig::new()
        .set(
            "eureka.client.service-url.defaultZone",
            "http://127.0.0.1:8761/eureka/",
        )
        .builder()
        .unwrap();
    assert!(format!("{builder:?}").contains("instance: None"));
    let builder = SpringConfig::new()
        .set("spring.application.name", "x")
        .set("eureka.client.register-with-eureka", "false")
        .builder()
        .unwrap();
    assert!(format!("{builder:?}").contains("instance: None"));
}

#[test]
fn builder_config_overrides_earlier_setters_and_yields_to_later_ones() {
    let config = feign_config::Config::from_yaml_str(
        "eureka.client:\n  service-url.defaultZone: http://10.0.0.1:8761/eureka/\n  registry-fetch-interval-seconds: 7\n  register-with-eureka: false\n",
        "application.yml",
    )
    .unwrap();
    let builder = EurekaClient::builder()
        .service_urls(["http://10.0.0.9:8761/eureka/"])
        .registry_fetch_interval(Duration::from_secs(60))
        .instance(InstanceConfig::new("before", 8080))
        .config(&config)
        .unwrap();
    let debug = format!("{builder:?}");
    assert!(debug.contains("10.0.0.1"), "{debug}");
    assert!(!debug.contains("10.0.0.9"), "{debug}");
    assert!(debug.contains("registry_fetch_interval: 7s"), "{debug}");
    assert!(debug.contains("instance: None"), "{debug}");
    let later = builder.registry_fetch_interval(Duration::from_secs(3));
    assert!(format!("{later:?}").contains("registry_fetch_interval: 3s"));
}

#[test]
fn errors_name_the_key_and_the_file_of_a_shared_config() {
    let dir = TempDir::new("eureka-config");
    let path = dir.write(
        "application.yml",
        "spring.cloud.loadbalancer.zone: zone-a\neureka:\n  instance:\n    lease-renewal-interval-in-seconds: often\n",
    );
    let config = feign_config::Config::from_file(&path);
    let err = SpringConfig::from_config(config.unwrap())
        .builder()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`eureka.instance.lease-renewal-interval-in-seconds`"),
        "{err}"
    );
    assert!(err.contains(&path.display().to_string()), "{err}");
    let env_err = SpringConfig::new()
        .merge_env_vars([(
            "EUREKA_CLIENT_FETCHREGISTRY".to_owned(),
            "perhaps".to_owned(),
        )])
        .builder()
        .unwrap_err()
        .to_string();
    assert!(
        env_err.contains("environment variable EUREKA_CLIENT_FETCHREGISTRY"),
        "{env_err}"
    );
}
