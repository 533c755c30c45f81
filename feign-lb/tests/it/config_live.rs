//! `Builder::build_live`: a balancer that follows `application.yml` as it changes: the policy
//! switched by a reload, a value it cannot bind logged and kept out, a change elsewhere leaving
//! it as it was.

use std::collections::HashMap;

use feign_config::LiveConfig;
use feign_core::{ChooseRequest, Resolver};
use feign_lb::{LiveLoadBalancer, LoadBalancer, ServiceInstance, SlowStart, StaticSupplier};
use feign_test_support::{Captured, TempDir};
use http::{HeaderMap, Method};

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
