//! `Builder::build_live`: a balancer that follows `application.yml` as it changes: the policy
//! switched by a reload, a value it cannot bind logged and kept out, a change elsewhere leaving
//! it as it was, and the instances' state kept across a reload.

use std::collections::HashMap;
use std::time::Duration;

use feign_config::LiveConfig;
use feign_core::resolve::{AttemptOutcome, ChooseRequest, Chosen, Resolver};
use feign_core::Error;
use feign_lb::{
    InstanceState, LiveLoadBalancer, LoadBalancer, ServiceInstance, SlowStart, StaticSupplier,
};
use feign_test_support::{Captured, TempDir};
use http::{HeaderMap, Method, StatusCode};

/// Picks `n` times; counts by instance id.
fn shares(lb: &LiveLoadBalancer, n: usize) -> HashMap<String, usize> {
    let headers = HeaderMap::new();
    let request = ChooseRequest::new("order-service", "Svc#get", &Method::GET, &headers);
    let mut counts = HashMap::new();
    for _ in 0..n {
        let chosen = lb.choose(&request).expect("an instance");
        *counts.entry(chosen.instance_id().to_string()).or_default() += 1;
    }
    counts
}

fn application_yml(policy: &str, other: &str) -> String {
    format!("feign.loadbalancer.policy: {policy}\napp.other: {other}\n")
}

#[tokio::test]
async fn the_policy_changes_on_reload_and_a_bad_one_is_kept_out() {
    let (logs, _guard) = Captured::install();
    let dir = TempDir::new("lb-live");
    let file = dir.write("application.yml", &application_yml("round-robin", "a"));
    let live = LiveConfig::from_files([&file]).unwrap();
    let supplier = StaticSupplier::empty().with_instances(
        "order-service",
        vec![
            ServiceInstance::new("order-service", "127.0.0.1", 1001)
                .with_instance_id("heavy")
                .with_metadata("weight", "3"),
            ServiceInstance::new("order-service", "127.0.0.1", 1002).with_instance_id("light"),
        ],
    );
    let lb = LoadBalancer::builder()
        .supplier(supplier)
        .slow_start(SlowStart::disabled())
        .seed(7)
        .build_live(&live)
        .unwrap();
    let counts = shares(&lb, 400);
    assert_eq!((counts["heavy"], counts["light"]), (200, 200), "{counts:?}");

    std::fs::write(&file, application_yml("weighted", "a")).unwrap();
    assert!(live.reload().unwrap());
    let counts = shares(&lb, 400);
    assert_eq!((counts["heavy"], counts["light"]), (300, 100), "{counts:?}");

    // A policy it does not know: logged with its key and file, weighted stays.
    std::fs::write(&file, application_yml("fastest", "a")).unwrap();
    assert!(live.reload().unwrap());
    let text = logs.text();
    assert!(
        text.contains("new load balancer properties not applied, the balancer keeps its settings: `feign.loadbalancer.policy` in ")
            && text.contains("application.yml"),
        "{text}"
    );
    let counts = shares(&lb, 400);
    assert_eq!((counts["heavy"], counts["light"]), (300, 100), "{counts:?}");

    // Back to a good policy, then a change outside the balancer's sections: the balancer in
    // force stays.
    std::fs::write(&file, application_yml("weighted", "a")).unwrap();
    assert!(live.reload().unwrap());
    shares(&lb, 10);
    assert!(lb.current().counters("order-service").is_some());
    std::fs::write(&file, application_yml("weighted", "b")).unwrap();
    assert!(live.reload().unwrap());
    // A rebuilt balancer would know the service only from its first pick.
    assert!(lb.current().counters("order-service").is_some());
}

fn instance(port: u16) -> ServiceInstance {
    ServiceInstance::new("order-service", "127.0.0.1", port).with_instance_id(format!("i{port}"))
}

fn ok() -> AttemptOutcome<'static> {
    AttemptOutcome::Response(StatusCode::OK)
}

/// Picks until instance `id` comes up; the other picks answer in 2 s, so that Peak-EWMA too
/// turns to `id` soon.
fn pick_until(lb: &LiveLoadBalancer, id: &str) -> Chosen {
    let headers = HeaderMap::new();
    let request = ChooseRequest::new("order-service", "Svc#get", &Method::GET, &headers);
    loop {
        let chosen = lb.choose(&request).expect("an instance");
        if &**chosen.instance_id() == id {
            return chosen;
        }
        chosen.complete(&ok(), Duration::from_secs(2));
    }
}

/// `application.yml` with `policy` and a retry setting that reloads change.
fn with_retries(policy: &str, retries: u32) -> String {
    format!(
        "feign.loadbalancer.policy: {policy}\n\
         spring.cloud.loadbalancer.retry.max-retries-on-next-service-instance: {retries}\n"
    )
}

fn state_of(lb: &LiveLoadBalancer, id: &str) -> InstanceState {
    let states = lb.current().instance_states("order-service");
    states
        .into_iter()
        .find(|s| s.instance.instance_id() == id)
        .expect("listed")
}

/// A reload that changes the retries keeps what it did not change: the instance ejected stays
/// out, and the latency learnt stays.
#[tokio::test(start_paused = true)]
async fn a_reload_keeps_ejections_and_latency_estimates() {
    let dir = TempDir::new("lb-live-state");
    let file = dir.write("application.yml", &with_retries("peak-ewma", 1));
    let live = LiveConfig::from_files([&file]).unwrap();
    let supplier =
        StaticSupplier::empty().with_instances("order-service", (1..=3).map(instance).collect());
    let lb = LoadBalancer::builder()
        .supplier(supplier)
        .seed(5)
        .build_live(&live)
        .unwrap();
    let error = Error::connect(std::io::Error::other("refused"));
    pick_until(&lb, "i1").complete(&AttemptOutcome::Failed(&error), Duration::from_millis(1));
    pick_until(&lb, "i2").complete(&ok(), Duration::from_millis(900));
    tokio::time::advance(Duration::from_secs(1)).await;
    let before = state_of(&lb, "i2").latency_estimate;
    assert!(before > Duration::from_millis(300), "{before:?}");

    std::fs::write(&file, with_retries("peak-ewma", 2)).unwrap();
    assert!(live.reload().unwrap());
    assert!(state_of(&lb, "i1").ejected);
    assert_eq!(state_of(&lb, "i2").latency_estimate, before);
    let counters = lb.current().counters("order-service").unwrap();
    assert_eq!(
        counters.ejections, 0,
        "the new balancer ejected nothing itself"
    );
}

/// A reload keeps a joining instance's slow-start clock: 10 s into its 30 s ramp it still
/// takes a fraction of its round-robin turns, where a new clock would give it every one.
#[tokio::test(start_paused = true)]
async fn a_reload_keeps_slow_start_clocks() {
    let dir = TempDir::new("lb-live-ramp");
    let file = dir.write("application.yml", &with_retries("round-robin", 1));
    let live = LiveConfig::from_files([&file]).unwrap();
    let supplier =
        StaticSupplier::empty().with_instances("order-service", (1..=2).map(instance).collect());
    let lb = LoadBalancer::builder()
        .supplier(supplier.clone())
        .seed(5)
        .build_live(&live)
        .unwrap();
    pick_until(&lb, "i1").complete(&ok(), Duration::from_millis(1));
    supplier.set("order-service", (1..=3).map(instance).collect());
    pick_until(&lb, "i1").complete(&ok(), Duration::from_millis(1));
    tokio::time::advance(Duration::from_secs(10)).await;

    std::fs::write(&file, with_retries("round-robin", 2)).unwrap();
    assert!(live.reload().unwrap());
    let i3 = shares(&lb, 900).get("i3").copied().unwrap_or(0);
    assert!(i3 < 200, "i3 took {i3} of 900 picks 10 s into its ramp");
    tokio::time::advance(Duration::from_secs(21)).await;
    assert_eq!(shares(&lb, 900).get("i3"), Some(&300), "the ramp is over");
}
