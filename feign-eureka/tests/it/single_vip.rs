//! `registry_fetch_single_vip_address`: only `GET vips/{vip}` is fetched, always in full (no
//! delta, as Netflix's client), and the client routes from it. Checked against a recording
//! server (which calls are made) and the embedded registry (what it answers).

use std::time::Duration;

use crate::embedded_registry;
use feign_eureka::model::{Application, Applications};
use feign_eureka::{EurekaClient, InstanceConfig};
use feign_test_support::eureka::{instance, FakeEureka};

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn fetches_only_the_vip_in_full_and_routes_from_it() {
    let server = FakeEureka::start().await;
    let mut shop = instance("orders", 1);
    shop.vip_address = Some("orders,shop".into());
    server.put(shop);
    server.put(instance("orders", 2));
    let mut cart = instance("cart", 3);
    cart.vip_address = Some("shop".into());
    server.put(cart);
    server.put(instance("billing", 4));
    // A delta that would remove everything, were it ever fetched.
    let mut delta = Applications::new(vec![Application::new("orders", Vec::new())]);
    delta.apps_hashcode = String::new();
    server.set_delta(Some(delta.to_json()));

    let eureka = EurekaClient::builder()
        .service_urls([server.url()])
        .registry_fetch_single_vip_address("shop")
        .registry_fetch_interval(Duration::from_secs(1))
        .start()
        .await
        .unwrap();
    let shop = eureka.instances("shop").expect("the VIP is known");
    let mut hosts: Vec<&str> = shop.iter().map(|i| i.host()).collect();
    hosts.sort_unstable();
    assert_eq!(hosts, ["10.0.0.1", "10.0.0.3"]);
    assert!(
        eureka.instances("billing").is_none(),
        "only the VIP is fetched"
    );
    assert_eq!(eureka.instance_count(), 2);

    let mut later = instance("cart", 5);
    later.vip_address = Some("shop".into());
    server.put(later);
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert_eq!(eureka.instances("SHOP").unwrap().len(), 3);

    let fetches = server.requests_matching("GET", "/eureka/");
    assert!(fetches.len() >= 4, "a fetch a second: {}", fetches.len());
    assert!(
        fetches.iter().all(|r| r.path == "/eureka/vips/shop"),
        "neither the full registry nor a delta: {:?}",
        fetches.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_registrys_vip_answer_is_routed_from() {
    let server = embedded_registry().await;
    let register = |app: &str, port: u16, vip: &str| {
        EurekaClient::builder()
            .service_urls([server.url()])
            .instance(
                InstanceConfig::new(app, port)
                    .ip_address("127.0.0.1")
                    .prefer_ip_address(true)
                    .vip_address(vip),
            )
            .fetch_registry(false)
            .registration_jitter(Duration::ZERO)
            .start()
    };
    let registered = [
        register("orders", 9001, "shop").await.unwrap(),
        register("cart", 9002, "shop").await.unwrap(),
        register("billing", 9003, "billing").await.unwrap(),
    ];
    for _ in 0..100 {
        if server.instance_count() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.instance_count(), 3);

    let eureka = EurekaClient::builder()
        .service_urls([server.url()])
        .registry_fetch_single_vip_address("shop")
        .enforce_fetch_at_init(true)
        .start()
        .await
        .unwrap();
    let mut ports: Vec<u16> = eureka
        .instances("shop")
        .expect("the VIP is known")
        .iter()
        .map(|i| i.port())
        .collect();
    ports.sort_unstable();
    assert_eq!(ports, [9001, 9002]);
    assert_eq!(eureka.instances("orders").unwrap().len(), 1);
    assert!(eureka.instances("billing").is_none());
    assert_eq!(eureka.applications().versions_delta, -1);

    eureka.refresh().await.unwrap();
    assert_eq!(eureka.instances("shop").unwrap().len(), 2);
    for client in registered {
        client.shutdown().await;
    }
    eureka.refresh().await.unwrap();
    assert!(eureka.instances("shop").is_none_or(|shop| shop.is_empty()));
    server.shutdown().await;
}

/// Spring's property name, and the name this crate's builder method suggests, both bind.
#[cfg(feature = "config")]
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_spring_property_selects_the_vip() {
    for key in [
        "eureka.client.registry-refresh-single-vip-address",
        "eureka.client.registry-fetch-single-vip-address",
    ] {
        let server = FakeEureka::start().await;
        server.put(instance("orders", 1));
        let yaml = format!(
            "eureka.client.service-url.defaultZone: {}\n{key}: orders\n",
            server.url()
        );
        let config = feign_config::Config::from_yaml_str(&yaml, "application.yml").unwrap();
        let eureka = EurekaClient::builder()
            .config(&config)
            .unwrap()
            .start()
            .await
            .unwrap();
        assert_eq!(eureka.instances("orders").unwrap().len(), 1, "{key}");
        let fetched: Vec<String> = server
            .requests_matching("GET", "/eureka/")
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(fetched, ["/eureka/vips/orders"], "{key}");
    }
}
