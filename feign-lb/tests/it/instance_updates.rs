//! An instance the registry updates in place (new metadata, a new zone or weight) is the same
//! endpoint: its slow-start ramp, ejection and latency estimate carry on, and hooks see its
//! new description. Only a new address makes it a new endpoint.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use feign_core::resolve::{AttemptOutcome, ChooseRequest, Chosen, Resolver};
use feign_core::Error;
use feign_lb::{
    Completion, LifecycleHook, LoadBalancer, Policy, ServiceInstance, SlowStart, StaticSupplier,
};
use http::{HeaderMap, Method, StatusCode};

const SVC: &str = "order-service";

fn instance(port: u16) -> ServiceInstance {
    ServiceInstance::new(SVC, "127.0.0.1", port).with_instance_id(format!("i{port}"))
}

fn pick(lb: &LoadBalancer) -> Chosen {
    let headers = HeaderMap::new();
    let request = ChooseRequest::new(SVC, "OrderService#get", &Method::GET, &headers);
    lb.choose(&request).expect("an instance")
}

fn answer(chosen: Chosen, elapsed: Duration) {
    chosen.complete(&AttemptOutcome::Response(StatusCode::OK), elapsed);
}

/// Picks `n` times, each answered in 10 ms; counts by instance id.
fn shares(lb: &LoadBalancer, n: usize) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for _ in 0..n {
        let chosen = pick(lb);
        *counts.entry(chosen.instance_id().to_string()).or_default() += 1;
        answer(chosen, Duration::from_millis(10));
    }
    counts
}

fn connect_error() -> Error {
    Error::connect(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        "refused",
    ))
}

/// The case: under round robin, a joining instance whose metadata changed mid-ramp
/// used to start its 30 s ramp over and took a fraction of its turns long after.
#[tokio::test(start_paused = true)]
async fn a_metadata_change_does_not_restart_the_slow_start_ramp() {
    let supplier = StaticSupplier::empty().with_instances(SVC, (1..=2).map(instance).collect());
    let lb = LoadBalancer::builder()
        .supplier(supplier.clone())
        .slow_start(SlowStart::new())
        .seed(3)
        .build();
    answer(pick(&lb), Duration::from_millis(10));
    supplier.set(SVC, (1..=3).map(instance).collect());
    answer(pick(&lb), Duration::from_millis(10)); // the pick that sees the new list
    tokio::time::advance(Duration::from_secs(20)).await;
    let updated = instance(3).with_metadata("version", "2");
    supplier.set(SVC, vec![instance(1), instance(2), updated]);
    answer(pick(&lb), Duration::from_millis(10));
    tokio::time::advance(Duration::from_secs(11)).await;
    // 31 s after joining, the ramp is over: three equal turns.
    let counts = shares(&lb, 900);
    assert_eq!(counts.get("i3"), Some(&300), "{counts:?}");
}

#[tokio::test(start_paused = true)]
async fn an_ejection_outlasts_a_metadata_change() {
    let supplier = StaticSupplier::empty().with_instances(SVC, (1..=3).map(instance).collect());
    let lb = LoadBalancer::builder()
        .supplier(supplier.clone())
        .slow_start(SlowStart::disabled())
        .seed(3)
        .build();
    let error = connect_error();
    loop {
        let chosen = pick(&lb);
        if &**chosen.instance_id() == "i1" {
            chosen.complete(&AttemptOutcome::Failed(&error), Duration::from_millis(1));
            break;
        }
        answer(chosen, Duration::from_millis(10));
    }
    supplier.set(
        SVC,
        vec![
            instance(1).with_metadata("zone", "z2"),
            instance(2),
            instance(3),
        ],
    );
    let states = lb.instance_states(SVC);
    let i1 = states.iter().find(|s| s.instance.instance_id() == "i1");
    assert!(i1.is_some_and(|s| s.ejected), "{states:?}");
    assert_eq!(shares(&lb, 300).get("i1"), None);
    assert_eq!(lb.counters(SVC).unwrap().ejections, 1);
}

#[test]
fn a_latency_estimate_outlasts_a_metadata_change_and_a_new_address_starts_afresh() {
    let supplier = StaticSupplier::empty().with_instances(SVC, (1..=2).map(instance).collect());
    let lb = LoadBalancer::builder()
        .supplier(supplier.clone())
        .policy(Policy::PeakEwma)
        .slow_start(SlowStart::disabled())
        .build();
    // i2 answers above the 30 ms default estimate, so i1 gets picked and answers in 400 ms.
    loop {
        let chosen = pick(&lb);
        if &**chosen.instance_id() == "i1" {
            answer(chosen, Duration::from_millis(400));
            break;
        }
        answer(chosen, Duration::from_millis(50));
    }
    let estimate = |lb: &LoadBalancer| {
        lb.instance_states(SVC)
            .into_iter()
            .find(|s| s.instance.instance_id() == "i1")
            .map(|s| s.latency_estimate)
            .expect("i1 listed")
    };
    assert!(
        estimate(&lb) >= Duration::from_millis(300),
        "{:?}",
        estimate(&lb)
    );

    supplier.set(
        SVC,
        vec![instance(1).with_metadata("weight", "2"), instance(2)],
    );
    assert!(
        estimate(&lb) >= Duration::from_millis(300),
        "{:?}",
        estimate(&lb)
    );

    // The same id at another port is another endpoint: nothing learnt about the old one holds.
    let moved = ServiceInstance::new(SVC, "127.0.0.1", 9).with_instance_id("i1");
    supplier.set(SVC, vec![moved, instance(2)]);
    assert!(
        estimate(&lb) < Duration::from_millis(100),
        "{:?}",
        estimate(&lb)
    );
}

/// What the hooks were told of each instance: its zone, by instance id.
#[derive(Default)]
struct Zones(Mutex<Vec<(String, Option<String>, &'static str)>>);

struct ZoneHook(Arc<Zones>);

impl LifecycleHook for ZoneHook {
    fn on_start_request(&self, _service: &str, instance: &ServiceInstance) {
        self.record(instance, "start");
    }

    fn on_complete(&self, completion: &Completion<'_>) {
        if let Some(instance) = completion.instance {
            self.record(instance, "complete");
        }
    }
}

impl ZoneHook {
    fn record(&self, instance: &ServiceInstance, when: &'static str) {
        let zone = instance.zone().map(str::to_owned);
        let id = instance.instance_id().to_owned();
        self.0 .0.lock().unwrap().push((id, zone, when));
    }
}

#[test]
fn hooks_see_the_instance_as_last_described() {
    let zones = Arc::new(Zones::default());
    let supplier = StaticSupplier::empty().with_instances(SVC, vec![instance(1)]);
    let lb = LoadBalancer::builder()
        .supplier(supplier.clone())
        .lifecycle(ZoneHook(zones.clone()))
        .build();
    let held = pick(&lb);
    supplier.set(SVC, vec![instance(1).with_metadata("zone", "z2")]);
    let next = pick(&lb); // the pick that sees the update
    answer(held, Duration::from_millis(1));
    answer(next, Duration::from_millis(1));
    let seen = zones.0.lock().unwrap().clone();
    let z2 = Some("z2".to_owned());
    assert_eq!(
        seen,
        [
            ("i1".to_owned(), None, "start"),
            ("i1".to_owned(), z2.clone(), "start"),
            ("i1".to_owned(), z2.clone(), "complete"),
            ("i1".to_owned(), z2, "complete"),
        ]
    );
}
