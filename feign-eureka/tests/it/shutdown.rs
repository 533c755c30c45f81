//! Shutdown: deregistration first (E1), bounded when Eureka hangs (E2), and dropping the client
//! or its runtime without shutdown (E3).

use std::time::Duration;

use feign_eureka::{EurekaClient, InstanceConfig};
use feign_test_support::closed_port_url;
use feign_test_support::eureka::{instance, FakeEureka, Mode};
use tokio::time::{sleep, Instant};

fn order_service() -> InstanceConfig {
    InstanceConfig::new("order-service", 8080)
        .host_name("10.0.0.5")
        .ip_address("10.0.0.5")
}

async fn client(server: &FakeEureka) -> EurekaClient {
    EurekaClient::builder()
        .service_urls([server.url()])
        .instance(order_service())
        .registration_jitter(Duration::ZERO)
        .start()
        .await
        .unwrap()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn shutdown_deregisters_first_then_stops_every_task() {
    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    let eureka = client(&server).await;
    server.wait_for("POST", "/eureka/apps/", 1).await;
    sleep(Duration::from_secs(65)).await;
    assert_eq!(server.requests_matching("PUT", "/eureka/apps/").len(), 2);
    let supplier = eureka.supplier();

    eureka.shutdown().await;
    let requests = server.requests();
    let last = requests.last().unwrap();
    assert_eq!(last.method, "DELETE");
    assert_eq!(
        last.path,
        "/eureka/apps/ORDER-SERVICE/10.0.0.5:order-service:8080"
    );
    assert!(server
        .instance("ORDER-SERVICE", "10.0.0.5:order-service:8080")
        .is_none());
    assert!(!eureka.is_registered());

    // Nothing more reaches Eureka: no heartbeat, no re-registration, no fetch.
    let count = server.requests().len();
    sleep(Duration::from_secs(600)).await;
    assert_eq!(server.requests().len(), count);
    // The supplier keeps serving the last registry; a second shutdown does nothing.
    assert_eq!(supplier.instances_len("orders"), 1);
    eureka.shutdown().await;
    assert_eq!(server.requests().len(), count);
}

trait Len {
    fn instances_len(&self, service: &str) -> usize;
}

impl Len for feign_eureka::EurekaSupplier {
    fn instances_len(&self, service: &str) -> usize {
        feign_lb::InstanceSupplier::instances(self, service).map_or(0, |i| i.len())
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn shutdown_is_bounded_when_eureka_hangs() {
    let server = FakeEureka::start().await;
    let eureka = client(&server).await;
    server.wait_for("POST", "/eureka/apps/", 1).await;
    server.set_mode(Mode::Hang);
    let started = Instant::now();
    eureka.shutdown().await;
    let took = started.elapsed();
    assert!(took <= Duration::from_millis(5_100), "{took:?}");
    assert_eq!(
        server.requests_matching("DELETE", "/eureka/apps/").len(),
        1,
        "one attempt, no retry loop"
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn shutdown_is_bounded_when_eureka_is_unreachable() {
    let eureka = EurekaClient::builder()
        .service_urls([format!("{}/eureka/", closed_port_url())])
        .instance(order_service())
        .registration_jitter(Duration::ZERO)
        .start()
        .await
        .unwrap();
    let started = Instant::now();
    eureka.shutdown().await;
    assert!(started.elapsed() <= Duration::from_millis(5_100));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn dropping_the_client_stops_its_tasks() {
    let server = FakeEureka::start().await;
    let eureka = client(&server).await;
    server.wait_for("POST", "/eureka/apps/", 1).await;
    let supplier = eureka.supplier();
    let clone = eureka.clone();
    drop(eureka);
    sleep(Duration::from_secs(31)).await;
    assert_eq!(
        server.requests_matching("PUT", "/eureka/apps/").len(),
        1,
        "a clone keeps it running"
    );
    drop(clone);
    sleep(Duration::from_secs(1)).await;
    let count = server.requests().len();
    sleep(Duration::from_secs(600)).await;
    assert_eq!(
        server.requests().len(),
        count,
        "no request after the last handle is dropped"
    );
    drop(supplier);
}

#[test]
fn dropping_the_runtime_with_a_live_client_does_not_panic() {
    let server_rt = tokio::runtime::Runtime::new().unwrap();
    let server = server_rt.block_on(FakeEureka::start());
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let eureka = client_rt.block_on(async {
        let eureka = client(&server).await;
        server.wait_for("POST", "/eureka/apps/", 1).await;
        // The server has the registration; the client marks itself registered once it has
        // read the answer.
        tokio::time::timeout(Duration::from_secs(10), async {
            while !eureka.is_registered() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("registered within 10 s");
        eureka
    });
    drop(client_rt);
    // The client outlives its runtime; using and dropping it must not panic.
    assert!(eureka.is_registered());
    let _ = eureka.instances("orders");
    drop(eureka);
    let count = server.requests().len();
    std::thread::sleep(Duration::from_millis(1_200));
    assert_eq!(server.requests().len(), count);
}
