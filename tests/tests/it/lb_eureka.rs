//! The balancer over instances discovered from the embedded registry: round robin stays a
//! rotation while instances come and go (each change of an application's list reaches the
//! client shuffled, as Netflix's client shuffles it), and health checks go to the URL each
//! instance registered.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use feign_eureka::{EurekaClient, InstanceConfig};
use feign_eureka_server::EurekaServer;
use feign_lb::{
    HealthCheckOptions, HealthCheckSupplier, InstanceSupplier, LifecycleHook, LoadBalancer,
    ServiceInstance,
};
use feign_test_support::backend::{Backend, Mode, OrderServiceClient};

const APP: &str = "order-service";

/// The embedded registry on a fresh port, answering from the registry itself (no read-only
/// cache).
async fn registry() -> EurekaServer {
    EurekaServer::builder()
        .bind("127.0.0.1:0")
        .read_only_cache(false)
        .start()
        .await
        .expect("the embedded registry starts")
}

/// A client of the registry at `url` that only discovers, following changes as they are pushed.
async fn discovery(url: &str) -> EurekaClient {
    EurekaClient::builder()
        .service_urls([url])
        .allow_loopback(true)
        .watch(true)
        .start()
        .await
        .expect("discovers")
}

/// Registers an instance of [`APP`] at 127.0.0.1:`port`, named by its address.
async fn register(registry: &str, port: u16) -> EurekaClient {
    register_as(registry, instance(port)).await
}

/// An instance of [`APP`] at 127.0.0.1:`port`, named by its address.
fn instance(port: u16) -> InstanceConfig {
    InstanceConfig::new(APP, port)
        .host_name("127.0.0.1")
        .ip_address("127.0.0.1")
        .prefer_ip_address(true)
        .instance_id(format!("127.0.0.1:{port}"))
}

async fn register_as(registry: &str, instance: InstanceConfig) -> EurekaClient {
    EurekaClient::builder()
        .service_urls([registry])
        .fetch_registry(false)
        .registration_jitter(Duration::ZERO)
        .instance(instance)
        .start()
        .await
        .expect("registers")
}

/// The instance ids the balancer picked, in order.
#[derive(Clone, Default)]
struct Picks(Arc<Mutex<Vec<String>>>);

impl LifecycleHook for Picks {
    fn on_start_request(&self, _service: &str, instance: &ServiceInstance) {
        self.0
            .lock()
            .unwrap()
            .push(instance.instance_id().to_owned());
    }
}

/// Four instances stay registered while a fifth registers and leaves again and again, every
/// change pushed to the client (watch) and reaching the balancer as a reshuffled list; calls
/// run one after another meanwhile. Round robin keeps its rotation: no four calls in a row
/// repeat an instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_robin_stays_a_rotation_while_discovered_instances_come_and_go() {
    let registry = registry().await;
    let url = registry.url().to_owned();
    let backends: Vec<Backend> = (0..5).map(|_| Backend::start()).collect();
    let mut staying = Vec::new();
    for backend in &backends[..4] {
        staying.push(register(&url, backend.addr.port()).await);
    }
    let discovery = discovery(&url).await;
    while discovery.instances(APP).is_none_or(|list| list.len() < 4) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    let picks = Picks::default();
    let lb = LoadBalancer::builder()
        .supplier(discovery.supplier())
        .lifecycle(picks.clone())
        .build();
    let orders = OrderServiceClient::builder()
        .load_balancer(lb)
        .build()
        .expect("client builds");

    // The fifth instance comes and goes; each time the client lists it counts a change seen.
    let done = Arc::new(AtomicBool::new(false));
    let changes = Arc::new(AtomicUsize::new(0));
    let churn = {
        let (url, done, changes) = (url.clone(), done.clone(), changes.clone());
        let (discovery, fifth) = (discovery.clone(), backends[4].addr.port());
        tokio::spawn(async move {
            let fifth_listed = |discovery: &EurekaClient| {
                discovery
                    .instances(APP)
                    .is_some_and(|list| list.iter().any(|i| i.port() == fifth))
            };
            while !done.load(Ordering::SeqCst) {
                let client = register(&url, fifth).await;
                wait_for("the fifth listed", || fifth_listed(&discovery)).await;
                changes.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                client.shutdown().await;
                wait_for("the fifth gone", || !fifth_listed(&discovery)).await;
                changes.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };

    let mut id = 0;
    while changes.load(Ordering::SeqCst) < 20 {
        id += 1;
        assert_eq!(orders.get_order(id).await.expect("call succeeds"), "ok");
        assert!(id < 50_000, "the registry changes did not reach the client");
    }
    done.store(true, Ordering::SeqCst);
    churn.await.expect("the churn task ends");

    let order = picks.0.lock().unwrap().clone();
    for window in order.windows(4) {
        let mut distinct = window.to_vec();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{window:?} among {} calls", order.len());
    }
    discovery.shutdown().await;
    for client in staying {
        client.shutdown().await;
    }
    registry.shutdown().await;
}

/// Waits until `done` holds, for at most 5 s; `what` names it if it never does.
async fn wait_for(what: &str, done: impl Fn() -> bool) {
    for _ in 0..5_000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("{what}: not within 5 s");
}

/// An instance that registered a health check URL on its management port is checked there,
/// not on the port it serves calls on: its management endpoint answers 503, so it is taken out
/// although its serving port would answer 200.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_checks_go_to_the_registered_health_check_url() {
    let registry = registry().await;
    let url = registry.url().to_owned();
    let (serving, healthy) = (Backend::start(), Backend::start());
    let management = Backend::start();
    management.set_mode(Mode::Unavailable);
    let health_url = format!("http://127.0.0.1:{}/manage/health", management.addr.port());
    let registrations = [
        register_as(
            &url,
            instance(serving.addr.port()).health_check_url(health_url),
        )
        .await,
        register(&url, healthy.addr.port()).await,
    ];
    let discovery = discovery(&url).await;
    wait_for("both listed", || {
        discovery.instances(APP).is_some_and(|list| list.len() == 2)
    })
    .await;

    let options = HealthCheckOptions::new().interval(Duration::from_millis(20));
    let checked = HealthCheckSupplier::with_options(Arc::new(discovery.supplier()), options);
    let healthy_port = healthy.addr.port();
    let served_only_healthy = || {
        checked
            .instances(APP)
            .is_some_and(|list| list.len() == 1 && list[0].port() == healthy_port)
    };
    wait_for(
        "the instance failing its management check taken out",
        served_only_healthy,
    )
    .await;
    let checks = management.log();
    assert!(
        checks.iter().all(|(_, path)| path == "/manage/health") && !checks.is_empty(),
        "{checks:?}"
    );
    assert_eq!(serving.hits(), 0, "checked on its serving port");

    discovery.shutdown().await;
    for client in registrations {
        client.shutdown().await;
    }
    registry.shutdown().await;
}
