//! `Builder::config`: Spring Cloud LoadBalancer's properties from real files decide how the
//! balancer picks, retries and health-checks against loopback backends; wrong keys and values
//! are errors naming the key and the file.

use std::collections::HashMap;
use std::time::Duration;

use feign_config::{Config, ConfigError};
use feign_core::resolve::{ChooseRequest, Chosen, Resolver};
use feign_lb::{LoadBalancer, Policy, ServiceInstance, SlowStart, StaticSupplier};
use feign_test_support::TempDir;
use http::{HeaderMap, HeaderValue, Method};

use feign_test_support::backend::{client, Backend, Mode, OrderServiceClient};

fn instance(service: &str, port: u16, zone: &str) -> ServiceInstance {
    ServiceInstance::new(service, "127.0.0.1", port)
        .with_instance_id(format!("{service}-{port}"))
        .with_metadata("zone", zone)
}

fn choose(lb: &LoadBalancer, service: &str, headers: &HeaderMap) -> Chosen {
    let request = ChooseRequest::new(service, "Svc#get", &Method::GET, headers);
    lb.choose(&request).expect("an instance")
}

/// Picks `n` times; counts by instance id.
fn shares(lb: &LoadBalancer, service: &str, n: usize) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for _ in 0..n {
        let chosen = choose(lb, service, &HeaderMap::new());
        *counts.entry(chosen.instance_id().to_string()).or_default() += 1;
    }
    counts
}

const APPLICATION_YML: &str = r#"
spring:
  cloud:
    loadbalancer:
      zone: zone-a
      configurations: zone-preference
      clients:
        weighted-svc:
          configurations: weighted
        sticky-svc:
          configurations: request-based-sticky-session
          sticky-session:
            instance-id-cookie-name: which
feign:
  loadbalancer:
    clients:
      random-svc:
        policy: random
"#;

#[tokio::test]
async fn a_configured_balancer_picks_as_the_file_says() {
    let dir = TempDir::new("picks");
    let path = dir.write("application.yml", APPLICATION_YML);
    let config = Config::from_file(&path).unwrap();
    let supplier = StaticSupplier::empty()
        .with_instances(
            "order-service",
            vec![
                instance("order-service", 1001, "zone-a"),
                instance("order-service", 1002, "zone-b"),
                instance("order-service", 1003, "zone-a"),
            ],
        )
        .with_instances(
            "weighted-svc",
            vec![
                instance("weighted-svc", 2001, "zone-b").with_metadata("weight", "3"),
                instance("weighted-svc", 2002, "zone-a"),
            ],
        )
        .with_instances(
            "sticky-svc",
            vec![
                instance("sticky-svc", 3001, "zone-a"),
                instance("sticky-svc", 3002, "zone-a"),
            ],
        );
    let lb = LoadBalancer::builder()
        .supplier(supplier)
        .slow_start(SlowStart::disabled())
        .seed(7)
        .config(&config)
        .unwrap()
        .build();

    // zone-preference with zone-a: never the zone-b instance, both zone-a ones in turn.
    let counts = shares(&lb, "order-service", 100);
    assert_eq!(counts.get("order-service-1002"), None, "{counts:?}");
    assert_eq!(counts["order-service-1001"], 50, "{counts:?}");
    assert_eq!(counts["order-service-1003"], 50, "{counts:?}");

    // The client's own preset replaces zone-preference: weights 3:1 across zones.
    let counts = shares(&lb, "weighted-svc", 400);
    assert_eq!(counts["weighted-svc-2001"], 300, "{counts:?}");
    assert_eq!(counts["weighted-svc-2002"], 100, "{counts:?}");

    // Sticky sessions by the configured cookie name.
    let mut headers = HeaderMap::new();
    headers.insert("cookie", HeaderValue::from_static("which=sticky-svc-3002"));
    for _ in 0..10 {
        assert_eq!(
            &**choose(&lb, "sticky-svc", &headers).instance_id(),
            "sticky-svc-3002"
        );
    }
}

#[tokio::test]
async fn retry_settings_from_the_file_decide_the_attempts() {
    let backends: Vec<Backend> = (0..3).map(|_| Backend::start()).collect();
    for backend in &backends {
        backend.set_mode(Mode::Unavailable);
    }
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let hits = || backends.iter().map(Backend::hits).sum::<usize>();

    let dir = TempDir::new("retry");
    let path = dir.write(
        "application.properties",
        "spring.cloud.loadbalancer.retry.max-retries-on-next-service-instance=2\n\
         spring.cloud.loadbalancer.retry.retryable-status-codes=503\n\
         spring.cloud.loadbalancer.clients.order-service.retry.maxRetriesOnSameServiceInstance=1\n",
    );
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::new("order-service", &urls))
        .config(&Config::from_file(&path).unwrap())
        .unwrap()
        .build();
    let orders = client(&lb, Duration::from_secs(5));
    let err = orders.get_order(1).await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    // One retry on the same instance, on each of three instances: six attempts.
    assert_eq!(hits(), 6);

    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::new("order-service", &urls))
        .config(
            &Config::new().with_env_vars([("SPRING_CLOUD_LOADBALANCER_RETRY_ENABLED", "false")]),
        )
        .unwrap()
        .build();
    client(&lb, Duration::from_secs(5))
        .get_order(2)
        .await
        .unwrap_err();
    assert_eq!(hits(), 7, "retries off: one attempt");
}

#[tokio::test]
async fn health_checks_from_the_file_keep_failing_instances_out() {
    let backends: Vec<Backend> = (0..3).map(|_| Backend::start()).collect();
    backends[1].set_mode(Mode::Unavailable);
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let config = Config::from_yaml_str(
        "spring.cloud.loadbalancer:\n  configurations: health-check\n  health-check:\n    interval: 50ms\n    path:\n      default: /health\n",
        "application.yml",
    )
    .unwrap();
    let lb = LoadBalancer::builder()
        .config(&config)
        .unwrap()
        .supplier(StaticSupplier::new("order-service", &urls))
        .build();
    let sick = format!("127.0.0.1:{}", backends[1].addr.port());
    let mut healthy = 0;
    for _ in 0..200 {
        healthy = lb.instance_states("order-service").len();
        if healthy == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(healthy, 2, "the failing instance is checked out");
    for _ in 0..20 {
        let chosen = choose(&lb, "order-service", &HeaderMap::new());
        assert!(!chosen.base_url().contains(&sick), "{}", chosen.base_url());
    }
    assert!(
        backends[1].log().iter().all(|(_, path)| path == "/health"),
        "checks go to the configured path"
    );
}

/// `health-check.port` sends the checks to that port of each instance, and
/// `health-check.refetch-instances` checks an instance the source adds at once;
/// `health_check_transport` hands the checks the calls' transport settings.
#[tokio::test]
async fn health_check_port_and_refetch_from_the_file() {
    let management = Backend::start();
    let backends: Vec<Backend> = (0..3).map(|_| Backend::start()).collect();
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let yaml = format!(
        "spring.cloud.loadbalancer:\n  configurations: health-check\n  health-check:\n    \
         interval: 25s\n    port: {}\n    refetch-instances: true\n    \
         refetch-instances-interval: 50ms\n    path:\n      default: /health\n",
        management.addr.port()
    );
    let config = Config::from_yaml_str(&yaml, "application.yml").unwrap();
    let source = StaticSupplier::new("order-service", &urls[..2]);
    let lb = LoadBalancer::builder()
        .supplier(source.clone())
        .health_check_transport(
            feign_core::transport::HttpClientConfig::new(),
            &feign_core::Options::new(),
        )
        .config(&config)
        .unwrap()
        .build();
    assert_eq!(lb.instance_states("order-service").len(), 2);
    let checks = || {
        management
            .log()
            .iter()
            .filter(|(_, p)| p == "/health")
            .count()
    };
    let checked = |n: usize| async move {
        for _ in 0..250 {
            if checks() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        checks()
    };
    assert_eq!(
        checked(2).await,
        2,
        "one check of each instance, on the management port"
    );
    source.set(
        "order-service",
        backends
            .iter()
            .map(|b| ServiceInstance::new("order-service", "127.0.0.1", b.addr.port()))
            .collect(),
    );
    assert_eq!(
        checked(3).await,
        3,
        "the new instance is checked at once, not in 25 s"
    );
    assert!(
        backends.iter().all(|b| b.hits() == 0),
        "no check on the serving ports"
    );

    for (key, value) in [
        ("spring.cloud.loadbalancer.health-check.port", "0"),
        ("spring.cloud.loadbalancer.health-check.port", "70000"),
        (
            "spring.cloud.loadbalancer.health-check.refetch-instances",
            "often",
        ),
        (
            "spring.cloud.loadbalancer.health-check.refetch-instances-interval",
            "0",
        ),
    ] {
        let config = Config::new().set(key, value);
        let error = LoadBalancer::builder().config(&config).unwrap_err();
        assert!(error.to_string().contains(key), "{key}={value}: {error}");
    }
}

#[test]
fn our_policy_key_and_code_defaults() {
    let config = Config::new().set("feign.loadbalancer.policy", "least-request");
    let lb = LoadBalancer::builder()
        .policy(Policy::PeakEwma)
        .config(&config)
        .unwrap();
    assert!(format!("{lb:?}").contains("LeastRequest"), "{lb:?}");
    let lb = LoadBalancer::builder()
        .policy(Policy::PeakEwma)
        .config(&Config::new())
        .unwrap();
    assert!(
        format!("{lb:?}").contains("PeakEwma"),
        "code default kept: {lb:?}"
    );
}

#[test]
fn wrong_keys_and_values_are_errors_naming_key_and_file() {
    let dir = TempDir::new("errors");
    for (text, key, reason) in [
        (
            "spring.cloud.loadbalancer.retry.max-retries=2",
            "spring.cloud.loadbalancer.retry.max-retries",
            "unknown property",
        ),
        (
            "spring.cloud.loadbalancer.clients.orders.healthcheck.intervall=5s",
            "spring.cloud.loadbalancer.clients.orders.healthcheck.intervall",
            "unknown property",
        ),
        (
            "spring.cloud.loadbalancer.configurations=fastest",
            "spring.cloud.loadbalancer.configurations",
            "expected one of default, zone-preference",
        ),
        (
            "spring.cloud.loadbalancer.configurations=zone-preference",
            "spring.cloud.loadbalancer.configurations",
            "needs spring.cloud.loadbalancer.zone",
        ),
        (
            "spring.cloud.loadbalancer.retry.retryable-status-codes=503,abc",
            "spring.cloud.loadbalancer.retry.retryable-status-codes",
            "status codes",
        ),
        (
            "spring.cloud.loadbalancer.retry.backoff.jitter=2",
            "spring.cloud.loadbalancer.retry.backoff.jitter",
            "from 0 to 1",
        ),
        (
            "spring.cloud.loadbalancer.cache.ttl=forever",
            "spring.cloud.loadbalancer.cache.ttl",
            "expected a duration",
        ),
        (
            "spring.cloud.loadbalancer.health-check.interval=0",
            "spring.cloud.loadbalancer.health-check.interval",
            "greater than zero",
        ),
        (
            "feign.loadbalancer.policy=fastest",
            "feign.loadbalancer.policy",
            "round-robin",
        ),
        (
            "feign.loadbalancer.clients.orders.zone=a",
            "feign.loadbalancer.clients.orders.zone",
            "unknown property",
        ),
        (
            "spring.cloud.loadbalancer.retry.avoid-previous-instance=false",
            "spring.cloud.loadbalancer.retry.avoid-previous-instance",
            "always avoid",
        ),
    ] {
        let path = dir.write("application.properties", text);
        let config = Config::from_file(&path).unwrap();
        let err = LoadBalancer::builder().config(&config).expect_err(text);
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("`{key}` in {}", path.display())),
            "{text}: {message}"
        );
        assert!(message.contains(reason), "{text}: {message}");
    }
}

#[tokio::test]
async fn hints_same_instance_and_our_policy_key() {
    let config = Config::from_yaml_str(
        r#"
spring.cloud.loadbalancer:
  hint:
    inventory: canary
  hint-header-name: X-Route
  clients:
    same-svc:
      configurations: same-instance-preference
feign.loadbalancer.clients.random-svc.policy: random
"#,
        "application.yml",
    )
    .unwrap();
    let two = |service: &str| {
        vec![
            instance(service, 1, "z").with_metadata("hint", "canary"),
            instance(service, 2, "z").with_metadata("hint", "stable"),
        ]
    };
    let lb = LoadBalancer::builder()
        .supplier(
            StaticSupplier::empty()
                .with_instances("inventory", two("inventory"))
                .with_instances("same-svc", two("same-svc"))
                .with_instances("random-svc", two("random-svc"))
                .with_instances("plain-svc", two("plain-svc")),
        )
        .slow_start(SlowStart::disabled())
        .seed(3)
        .config(&config)
        .unwrap()
        .build();

    let counts = shares(&lb, "inventory", 10);
    assert_eq!(
        counts.get("inventory-1"),
        Some(&10),
        "hint.inventory: {counts:?}"
    );
    let mut headers = HeaderMap::new();
    headers.insert("x-route", HeaderValue::from_static("stable"));
    assert_eq!(
        &**choose(&lb, "inventory", &headers).instance_id(),
        "inventory-2"
    );
    let counts = shares(&lb, "plain-svc", 10);
    assert_eq!(counts.len(), 2, "no hint for other services: {counts:?}");

    let first = choose(&lb, "same-svc", &HeaderMap::new())
        .instance_id()
        .clone();
    for _ in 0..10 {
        assert_eq!(
            choose(&lb, "same-svc", &HeaderMap::new()).instance_id(),
            &first
        );
    }

    let picks: Vec<String> = (0..20)
        .map(|_| {
            choose(&lb, "random-svc", &HeaderMap::new())
                .instance_id()
                .to_string()
        })
        .collect();
    assert!(
        picks.windows(2).any(|w| w[0] == w[1]),
        "random, not round robin: {picks:?}"
    );
    let picks: Vec<String> = (0..20)
        .map(|_| {
            choose(&lb, "plain-svc", &HeaderMap::new())
                .instance_id()
                .to_string()
        })
        .collect();
    assert!(
        picks.windows(2).all(|w| w[0] != w[1]),
        "round robin: {picks:?}"
    );
}

#[tokio::test]
async fn health_checks_wait_for_the_initial_delay() {
    let backends: Vec<Backend> = (0..3).map(|_| Backend::start()).collect();
    backends[2].set_mode(Mode::Unavailable);
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let config = Config::new()
        .set("spring.cloud.loadbalancer.configurations", "health-check")
        .set("spring.cloud.loadbalancer.health-check.initial-delay", "3s")
        .set("spring.cloud.loadbalancer.health-check.interval", "50")
        .set(
            "spring.cloud.loadbalancer.health-check.path.order-service",
            "/ready",
        );
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::new("order-service", &urls))
        .config(&config)
        .unwrap()
        .build();
    assert_eq!(lb.instance_states("order-service").len(), 3);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        lb.instance_states("order-service").len(),
        3,
        "no check before the initial delay"
    );
    assert_eq!(backends[2].hits(), 0);
    let mut listed = 3;
    for _ in 0..500 {
        listed = lb.instance_states("order-service").len();
        if listed == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(listed, 2, "checked after it");
    assert!(backends[2].log().iter().all(|(_, path)| path == "/ready"));
}

/// The balancer's chain and its client's chain share `feign_core::Error`: one `?` each, and a
/// bad property still names its key through the `ConfigError` source.
#[tokio::test]
async fn the_balancer_and_its_client_are_configured_with_one_error_type(
) -> Result<(), feign_core::Error> {
    let backend = Backend::start();
    let config = Config::from_yaml_str(
        "spring.cloud.loadbalancer.retry.enabled: false\n\
         feign.client.config.order-service.read-timeout: 2000\n",
        "application.yml",
    )?;
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::new("order-service", [backend.url()]))
        .config(&config)?
        .build();
    let orders = OrderServiceClient::builder()
        .load_balancer(lb)
        .config(&config)?
        .build()?;
    orders.get_order(1).await?;

    let typo = Config::new().set("spring.cloud.loadbalancer.retry.enabeld", "false");
    let err = LoadBalancer::builder().config(&typo).unwrap_err();
    assert!(err.is_config(), "{err:?}");
    let cause = std::error::Error::source(&err)
        .and_then(|source| source.downcast_ref::<ConfigError>())
        .expect("the ConfigError is the source");
    assert_eq!(cause.key(), Some("spring.cloud.loadbalancer.retry.enabeld"));
    Ok(())
}
