//! The feign-eureka client against this crate's registry: registration,
//! discovery, deltas with matching hashes, status changes, an admin override, a registry
//! restart, and deregistration.

use std::future::Future;
use std::time::{Duration, Instant};

use feign_eureka::model::InstanceStatus;
use feign_eureka::{EurekaClient, InstanceConfig};
use feign_eureka_server::EurekaServer;
use feign_lb::InstanceSupplier;

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting until {what}");
}

async fn registry(bind: &str) -> EurekaServer {
    EurekaServer::builder()
        .bind(bind)
        .self_preservation(false)
        .read_only_cache(false)
        .eviction_interval(Duration::from_secs(1))
        .start()
        .await
        .expect("embedded registry starts")
}

async fn client(url: &str, instance: Option<InstanceConfig>) -> EurekaClient {
    let mut builder = EurekaClient::builder()
        .service_urls([url])
        .registry_fetch_interval(Duration::from_secs(1))
        .registration_jitter(Duration::ZERO);
    if let Some(instance) = instance {
        builder = builder.instance(instance);
    }
    builder.start().await.expect("client starts")
}

fn service(app: &str, port: u16) -> InstanceConfig {
    InstanceConfig::new(app, port)
        .host_name("127.0.0.1")
        .ip_address("127.0.0.1")
        .metadata("zone", "zone-a")
        .lease_renewal_interval(Duration::from_secs(1))
        .lease_expiration_duration(Duration::from_secs(3))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_discover_change_and_deregister() {
    let server = registry("127.0.0.1:0").await;
    let url = server.url().to_owned();
    let orders = client(&url, Some(service("orders", 9100))).await;
    let reader = client(&url, None).await;
    let supplier = reader.supplier();

    eventually("the reader discovers orders", || async {
        supplier.instances("orders").is_some_and(|l| l.len() == 1)
    })
    .await;
    let found = supplier.instances("ORDERS").unwrap()[0].clone();
    assert_eq!(found.instance_id(), "127.0.0.1:orders:9100");
    assert_eq!(found.base_url().as_ref(), "http://127.0.0.1:9100");
    assert_eq!(found.zone(), Some("zone-a"));

    // A second instance arrives through a delta; the hashes agree.
    let seen = supplier.version();
    let second = client(&url, Some(service("orders", 9101))).await;
    tokio::time::timeout(Duration::from_secs(10), supplier.changed(seen))
        .await
        .expect("change notified");
    eventually("both instances are routable", || async {
        supplier.instances("orders").is_some_and(|l| l.len() == 2)
    })
    .await;
    assert_eq!(reader.registry_hash_code(), "UP_2_");

    // DOWN by re-registration: not routable, hash DOWN_1_UP_1_.
    second.set_status(InstanceStatus::Down);
    eventually("the DOWN instance leaves the routable set", || async {
        reader.registry_hash_code() == "DOWN_1_UP_1_"
            && supplier.instances("orders").is_some_and(|l| l.len() == 1)
    })
    .await;

    // Shutdown deregisters: the reader sees it go.
    second.shutdown().await;
    eventually("the deregistered instance is gone", || async {
        reader.registry_hash_code() == "UP_1_"
    })
    .await;
    orders.shutdown().await;
    eventually("the registry is empty", || async {
        reader.instance_count() == 0
    })
    .await;
    assert_eq!(server.instance_count(), 0);
    reader.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_override_is_respected() {
    let server = registry("127.0.0.1:0").await;
    let url = server.url().to_owned();
    let svc = client(&url, Some(service("override-me", 9200))).await;
    eventually("UP in the registry", || async {
        svc.refresh().await.is_ok() && svc.remote_status() == Some(InstanceStatus::Up)
    })
    .await;
    let http = reqwest::Client::new();
    let status_url = format!("{url}apps/OVERRIDE-ME/127.0.0.1:override-me:9200/status");
    let answer = http
        .put(format!("{status_url}?value=OUT_OF_SERVICE"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    eventually("out of service", || async {
        svc.refresh().await.is_ok()
            && svc.remote_status() == Some(InstanceStatus::OutOfService)
            && svc.instances("override-me").is_some_and(|l| l.is_empty())
    })
    .await;
    let answer = http.delete(&status_url).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    eventually("back in service", || async {
        svc.refresh().await.is_ok() && svc.instances("override-me").is_some_and(|l| l.len() == 1)
    })
    .await;
    svc.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_registry_gets_the_registration_back() {
    let server = registry("127.0.0.1:0").await;
    let addr = server.local_addr();
    let url = server.url().to_owned();
    let svc = client(&url, Some(service("survivor", 9300))).await;
    eventually("registered", || async { server.instance_count() == 1 }).await;
    server.shutdown().await;
    let server = registry(&addr.to_string()).await;
    eventually("registered again after a heartbeat got 404", || async {
        server.instance_count() == 1
    })
    .await;
    eventually("discovered again", || async {
        svc.refresh().await.is_ok() && svc.instances("survivor").is_some_and(|l| l.len() == 1)
    })
    .await;
    svc.shutdown().await;
    server.shutdown().await;
}
