//! Push discovery from the client's side: `watch` (and `eureka.client.watch-enabled`) makes the
//! client follow a registry that offers the watch, and changes nothing against one that does not.

use std::time::{Duration, Instant};

use crate::embedded_registry;
use feign_eureka::{EurekaClient, InstanceConfig, SpringConfig};
use feign_test_support::eureka::{instance, FakeEureka};

/// Against a server that offers no watch (the fake, as Spring's), the client with the watch on
/// makes exactly the calls it makes without it: fetches, never `GET watch`.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_server_without_the_watch_is_polled_as_before() {
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    let eureka = EurekaClient::builder()
        .service_urls([server.url()])
        .registry_fetch_interval(Duration::from_secs(1))
        .watch(true)
        .start()
        .await
        .unwrap();
    server.put(instance("orders", 2));
    tokio::time::sleep(Duration::from_millis(3_500)).await;
    assert_eq!(eureka.instances("orders").unwrap().len(), 2, "polled");
    let paths: Vec<String> = server
        .requests_matching("GET", "/eureka/")
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert!(paths.len() >= 3, "one fetch a second: {paths:?}");
    assert!(
        paths
            .iter()
            .all(|p| p == "/eureka/apps/" || p == "/eureka/apps/delta"),
        "{paths:?}"
    );
    eureka.shutdown().await;
}

/// The property turns the watch on: a registration reaches a client that would poll only every
/// minute, at once.
#[cfg(feature = "config")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_property_turns_the_watch_on() {
    let registry = embedded_registry().await;
    let yaml = format!(
        "eureka.client.service-url.defaultZone: {}\n\
         eureka.client.registry-fetch-interval-seconds: 60\n\
         eureka.client.watch-enabled: true\n\
         eureka.client.watch-timeout-seconds: 5\n",
        registry.url()
    );
    let builder = SpringConfig::from_yaml_str(&yaml).unwrap().builder();
    let eureka = builder.unwrap().start().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let orders = EurekaClient::builder()
        .service_urls([registry.url()])
        .fetch_registry(false)
        .registration_jitter(Duration::ZERO)
        .instance(
            InstanceConfig::new("orders", 9001)
                .host_name("127.0.0.1")
                .ip_address("127.0.0.1"),
        )
        .start()
        .await
        .unwrap();
    while eureka.instances("orders").is_none_or(|i| i.is_empty()) {
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the registration did not reach the watching client"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    orders.shutdown().await;
    eureka.shutdown().await;
    registry.shutdown().await;

    let bad = feign_config::Config::from_yaml_str(
        "eureka.client.watch-enabled: sometimes",
        "application.yml",
    )
    .unwrap();
    let err = EurekaClient::builder().config(&bad).unwrap_err();
    assert!(
        err.to_string().contains("eureka.client.watch-enabled"),
        "{err}"
    );
}
