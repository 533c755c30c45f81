//! This crate's Eureka client against the embedded registry: registration, discovery through
//! full fetches and deltas, status changes and deregistration, end to end over HTTP.

use std::time::Duration;

use crate::support::start;
use feign_eureka::model::InstanceStatus;
use feign_eureka::{EurekaClient, InstanceConfig};

/// A client registered with the registry at `url` as `app` / `id`, fetching every 200 ms.
pub(crate) async fn client(url: &str, app: &str, id: &str, port: u16) -> EurekaClient {
    EurekaClient::builder()
        .service_urls([url])
        .instance(
            InstanceConfig::new(app, port)
                .host_name("127.0.0.1")
                .ip_address("127.0.0.1")
                .instance_id(id)
                .zone("zone-a"),
        )
        .registration_jitter(Duration::ZERO)
        .registry_fetch_interval(Duration::from_millis(200))
        .allow_loopback(true)
        .start()
        .await
        .expect("client starts")
}

/// Whether `check` holds within 5 s.
pub(crate) async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..100 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_clients_register_and_discover_each_other_through_the_embedded_registry() {
    let server = start().await;
    let orders = client(server.url(), "orders", "orders-1", 8080).await;
    let billing = client(server.url(), "billing", "billing-1", 9090).await;
    assert!(eventually(|| orders.is_registered() && billing.is_registered()).await);
    assert_eq!(server.instance_count(), 2);

    let sees = |c: &EurekaClient, app: &str, status: InstanceStatus| {
        c.applications()
            .application(app)
            .is_some_and(|a| a.instances.iter().any(|i| i.status == status))
    };
    billing.refresh().await.expect("refresh");
    assert!(eventually(|| sees(&billing, "ORDERS", InstanceStatus::Up)).await);
    assert!(eventually(|| sees(&orders, "BILLING", InstanceStatus::Up)).await);
    assert_eq!(orders.registry_hash_code(), "UP_2_");

    // A status change travels by re-registration and reaches the other client as a delta.
    orders.set_status(InstanceStatus::Down);
    assert!(eventually(|| sees(&billing, "ORDERS", InstanceStatus::Down)).await);
    assert!(eventually(|| billing.registry_hash_code() == "DOWN_1_UP_1_").await);

    orders.shutdown().await;
    assert_eq!(server.instance_count(), 1, "shutdown deregisters");
    assert!(eventually(|| billing.applications().application("ORDERS").is_none()).await);
    billing.shutdown().await;
    server.shutdown().await;
}
