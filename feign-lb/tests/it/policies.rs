//! Seeded, deterministic tests of every policy and routing filter, through the public
//! `Resolver` interface the client pipeline uses.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use feign_core::resolve::{AttemptOutcome, ChooseRequest, Chosen, Resolver};
use feign_core::Error;
use feign_lb::{
    Canary, Completion, CompletionStatus, Ejection, Hints, LifecycleHook, LoadBalancer, Policy,
    ServiceConfig, ServiceInstance, SlowStart, StaticSupplier, StickySession, VersionRouting,
    ZonePreference,
};
use http::{HeaderMap, Method, StatusCode};

const SVC: &str = "order-service";

fn instance(port: u16) -> ServiceInstance {
    ServiceInstance::new(SVC, "127.0.0.1", port).with_instance_id(format!("i{port}"))
}

fn balancer(policy: Policy, instances: Vec<ServiceInstance>) -> (LoadBalancer, StaticSupplier) {
    let supplier = StaticSupplier::empty().with_instances(SVC, instances);
    let lb = LoadBalancer::builder()
        .supplier(supplier.clone())
        .policy(policy)
        .slow_start(SlowStart::disabled())
        .seed(42)
        .build();
    (lb, supplier)
}

fn choose_with(
    lb: &LoadBalancer,
    headers: &HeaderMap,
    tried: &[Arc<str>],
) -> Result<Chosen, Error> {
    let mut req = ChooseRequest::new(SVC, "OrderService#get", &Method::GET, headers);
    req.tried = tried;
    lb.choose(&req)
}

fn pick(lb: &LoadBalancer) -> Chosen {
    choose_with(lb, &HeaderMap::new(), &[]).expect("an instance")
}

fn finish(chosen: Chosen, outcome: &AttemptOutcome<'_>, elapsed: Duration) {
    assert!(chosen.is_observed(), "an observer");
    chosen.complete(outcome, elapsed);
}

fn ok(chosen: Chosen) {
    finish(
        chosen,
        &AttemptOutcome::Response(StatusCode::OK),
        Duration::from_millis(10),
    );
}

/// Picks until instance `id` comes up, completing the other attempts at once.
fn pick_until(lb: &LoadBalancer, id: &str) -> Chosen {
    loop {
        let c = pick(lb);
        if &**c.instance_id() == id {
            return c;
        }
        ok(c);
    }
}

/// Picks `n` times, completing each attempt at once; counts by instance id.
fn shares(lb: &LoadBalancer, n: usize) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for _ in 0..n {
        let chosen = pick(lb);
        *counts.entry(chosen.instance_id().to_string()).or_default() += 1;
        ok(chosen);
    }
    counts
}

fn weighted(port: u16, weight: u32) -> ServiceInstance {
    instance(port).with_metadata("weight", weight.to_string())
}

#[test]
fn round_robin_visits_every_instance_in_turn() {
    let (lb, _s) = balancer(Policy::RoundRobin, (1..=3).map(instance).collect());
    let order: Vec<String> = (0..300)
        .map(|_| pick(&lb).instance_id().to_string())
        .collect();
    let position = |id: &str| ["i1", "i2", "i3"].iter().position(|x| *x == id).unwrap();
    for pair in order.windows(2) {
        assert_eq!(position(&pair[1]), (position(&pair[0]) + 1) % 3, "{pair:?}");
    }
}

/// A supplier that reorders its list at every change (as Eureka's client shuffles an
/// application whose instances changed) leaves round robin a rotation: with four instances
/// always listed and a fifth coming and going, no four picks in a row repeat an instance.
#[test]
fn round_robin_stays_a_rotation_while_the_list_is_reordered_and_changes() {
    let (lb, supplier) = balancer(Policy::RoundRobin, (1..=4).map(instance).collect());
    let mut order = Vec::new();
    for round in 0..200u16 {
        let mut list: Vec<ServiceInstance> = (1..=4).map(instance).collect();
        if round % 3 == 0 {
            list.push(instance(5));
        }
        list.rotate_left(usize::from(round % 5));
        if round % 2 == 0 {
            list.reverse();
        }
        supplier.set(SVC, list);
        for _ in 0..3 {
            order.push(pick(&lb).instance_id().to_string());
        }
    }
    for (at, window) in order.windows(4).enumerate() {
        let mut distinct = window.to_vec();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "picks {at}..{}: {window:?}", at + 4);
    }
}

#[test]
fn seeded_balancers_repeat_their_picks() {
    for policy in Policy::ALL {
        let run = || {
            let (lb, _s) = balancer(policy, (1..=5).map(|p| weighted(p, u32::from(p))).collect());
            (0..50)
                .map(|_| pick(&lb).instance_id().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run(), "{policy:?}");
    }
}

#[test]
fn random_spreads_evenly() {
    let (lb, _s) = balancer(Policy::Random, (1..=5).map(instance).collect());
    let counts = shares(&lb, 100_000);
    for (id, n) in &counts {
        assert!((19_000..21_000).contains(n), "{id}: {n}");
    }
}

#[test]
fn weighted_shares_are_within_a_tenth_of_a_percent_over_a_million_picks() {
    for weights in [vec![1u32, 2, 3, 5, 10], vec![100, 1], vec![7, 7, 1]] {
        let instances: Vec<_> = weights
            .iter()
            .enumerate()
            .map(|(i, &w)| weighted(i as u16 + 1, w))
            .collect();
        let (lb, _s) = balancer(Policy::Weighted, instances);
        let n = 1_000_000;
        let counts = shares(&lb, n);
        let total: u32 = weights.iter().sum();
        for (i, &w) in weights.iter().enumerate() {
            let got = counts.get(&format!("i{}", i + 1)).copied().unwrap_or(0) as f64 / n as f64;
            let want = f64::from(w) / f64::from(total);
            assert!(
                (got - want).abs() <= 0.001,
                "weights {weights:?}: instance {i} got {got}, want {want}"
            );
        }
    }
}

/// Weights as written: fractions keep their split (a Traefik-style 0.2 / 0.3 / 0.5 used to
/// read as 1 / 1 / 1), and weight 0 takes no traffic, retries included.
#[test]
fn fractional_weights_are_honoured_and_weight_zero_takes_nothing() {
    for weights in [
        vec!["0.2", "0.3", "0.5"],
        vec!["2.5", "1", "0.25"],
        vec!["0.5", "0", "1.5"],
    ] {
        let instances: Vec<_> = weights
            .iter()
            .enumerate()
            .map(|(i, w)| instance(i as u16 + 1).with_metadata("weight", *w))
            .collect();
        let (lb, _s) = balancer(Policy::Weighted, instances);
        let n = 1_000_000;
        let counts = shares(&lb, n);
        let written: Vec<f64> = weights.iter().map(|w| w.parse().unwrap()).collect();
        let total: f64 = written.iter().sum();
        for (i, w) in written.iter().enumerate() {
            let got = counts.get(&format!("i{}", i + 1)).copied().unwrap_or(0) as f64 / n as f64;
            let want = w / total;
            assert!(
                (got - want).abs() <= 0.001,
                "weights {weights:?}: instance {i} got {got}, want {want}"
            );
        }
    }

    // A retry that already tried the only instance with a weight goes back to it, not to the
    // instance of weight 0; when every instance weighs 0, they share.
    let (lb, _s) = balancer(
        Policy::Weighted,
        vec![
            instance(1).with_metadata("weight", "0"),
            instance(2).with_metadata("weight", "1"),
        ],
    );
    let tried: [Arc<str>; 1] = [Arc::from("i2")];
    for _ in 0..100 {
        let retry = choose_with(&lb, &HeaderMap::new(), &tried).expect("an instance");
        assert_eq!(&**retry.instance_id(), "i2");
    }
    let (lb, _s) = balancer(
        Policy::Weighted,
        (1..=2)
            .map(|p| instance(p).with_metadata("weight", "0"))
            .collect(),
    );
    assert_eq!(shares(&lb, 100).get("i1"), Some(&50));
}

/// A weight that is not a number of at least 0 counts as 1, and says so once per instance,
/// naming it, however often the list is rebuilt.
#[test]
fn an_unreadable_weight_is_logged_once_naming_the_instance() {
    let (logs, _guard) = feign_test_support::Captured::install();
    let list = || {
        vec![
            instance(1).with_metadata("weight", "heavy"),
            instance(2).with_metadata("weight", "-2"),
            instance(3).with_metadata("weight", "3"),
        ]
    };
    let (lb, supplier) = balancer(Policy::Weighted, list());
    for round in 0..5 {
        let mut changed = list();
        changed[2] = instance(3).with_metadata("weight", format!("{}", 3 + round));
        supplier.set(SVC, changed);
        pick(&lb);
    }
    let warnings = logs.matching(
        tracing::Level::WARN,
        "instance weight is not a number of at least 0; it weighs 1",
    );
    let named: Vec<(String, String)> = warnings
        .iter()
        .map(|e| (e.fields["instance"].clone(), e.fields["weight"].clone()))
        .collect();
    assert_eq!(
        named,
        [
            ("i1".to_owned(), "\"heavy\"".to_owned()),
            ("i2".to_owned(), "\"-2\"".to_owned())
        ],
        "{}",
        logs.text()
    );
    let counts = shares(&lb, 900);
    assert_eq!((counts["i1"], counts["i2"]), (100, 100), "{counts:?}");
}

#[test]
fn weighted_five_one_one_is_interleaved_not_bursty() {
    let (lb, _s) = balancer(
        Policy::Weighted,
        vec![weighted(1, 5), weighted(2, 1), weighted(3, 1)],
    );
    let picks: Vec<String> = (0..700)
        .map(|_| pick(&lb).instance_id().to_string())
        .collect();
    let want = [("i1", 5.0 / 7.0), ("i2", 1.0 / 7.0), ("i3", 1.0 / 7.0)];
    for k in 1..=49 {
        for window in picks.windows(k) {
            for (id, share) in want {
                let count = window.iter().filter(|p| *p == id).count() as f64;
                assert!(
                    (count - k as f64 * share).abs() <= 2.0,
                    "window {k}: {window:?}"
                );
            }
        }
    }
    for pair in picks.windows(2) {
        assert!(
            pair[0] == "i1" || pair[1] == "i1",
            "two minor picks in a row: {pair:?}"
        );
    }
}

#[test]
fn least_request_never_picks_the_strictly_busiest() {
    let (lb, _s) = balancer(Policy::LeastRequest, (1..=4).map(instance).collect());
    // Load one instance with three attempts in flight.
    let headers = HeaderMap::new();
    let held: Vec<Chosen> = (0..3)
        .map(|_| {
            let mut req = ChooseRequest::new(SVC, "k", &Method::GET, &headers);
            req.same_instance = Some("i1");
            lb.choose(&req).unwrap()
        })
        .collect();
    let counts = shares(&lb, 10_000);
    assert_eq!(counts.get("i1"), None, "{counts:?}");
    for c in held {
        ok(c);
    }
}

#[test]
fn peak_ewma_repels_slow_and_fast_failing_instances() {
    // One instance answering 20x slower, then one failing fast with 503s.
    for (bad, status, elapsed) in [
        ("i1", StatusCode::OK, Duration::from_millis(200)),
        (
            "i2",
            StatusCode::SERVICE_UNAVAILABLE,
            Duration::from_micros(300),
        ),
    ] {
        let (lb, _s) = balancer(Policy::PeakEwma, (1..=4).map(instance).collect());
        for _ in 0..2_000 {
            let c = pick(&lb);
            if &**c.instance_id() == bad {
                finish(c, &AttemptOutcome::Response(status), elapsed);
            } else {
                finish(
                    c,
                    &AttemptOutcome::Response(StatusCode::OK),
                    Duration::from_millis(10),
                );
            }
        }
        let counts = shares(&lb, 10_000);
        let got = counts.get(bad).copied().unwrap_or(0);
        assert!(got < 100, "{bad} got {got} of 10000: {counts:?}");
    }
}

#[test]
fn every_policy_avoids_every_tried_instance() {
    for policy in Policy::ALL {
        let (lb, _s) = balancer(policy, (1..=3).map(|p| weighted(p, u32::from(p))).collect());
        let tried: Vec<Arc<str>> = vec!["i1".into(), "i3".into()];
        for _ in 0..200 {
            let c = choose_with(&lb, &HeaderMap::new(), &tried).unwrap();
            assert_eq!(&**c.instance_id(), "i2", "{policy:?}");
            ok(c);
        }
        // Everything tried: fall back to any instance rather than fail.
        let all: Vec<Arc<str>> = vec!["i1".into(), "i2".into(), "i3".into()];
        let c = choose_with(&lb, &HeaderMap::new(), &all).unwrap();
        ok(c);
    }
}

#[test]
fn same_instance_requests_are_honoured() {
    let (lb, _s) = balancer(Policy::RoundRobin, (1..=3).map(instance).collect());
    let headers = HeaderMap::new();
    for _ in 0..10 {
        let mut req = ChooseRequest::new(SVC, "k", &Method::GET, &headers);
        req.same_instance = Some("i2");
        req.attempt = 2;
        let c = lb.choose(&req).unwrap();
        assert_eq!(&**c.instance_id(), "i2");
        ok(c);
    }
}

#[test]
fn no_instance_errors_name_the_service_and_the_reason() {
    let (lb, supplier) = balancer(Policy::RoundRobin, vec![]);
    let err = pick_err(&lb);
    assert!(err.is_no_instance());
    assert!(
        err.to_string().contains(SVC) && err.to_string().contains("none registered"),
        "{err}"
    );

    supplier.remove(SVC);
    let err = pick_err(&lb);
    assert!(err.to_string().contains("unknown to discovery"), "{err}");

    let lb = LoadBalancer::builder().build();
    assert!(pick_err(&lb).to_string().contains("no instance supplier"));

    let supplier = StaticSupplier::empty()
        .with_instances(SVC, vec![instance(1).with_metadata("version", "1")]);
    let lb = LoadBalancer::builder()
        .supplier(supplier)
        .version_routing(
            VersionRouting::header(http::HeaderName::from_static("x-version")).required(true),
        )
        .build();
    let mut headers = HeaderMap::new();
    headers.insert("x-version", "2".parse().unwrap());
    let err = choose_with(&lb, &headers, &[]).unwrap_err();
    assert!(
        err.is_no_instance() && err.to_string().contains("all filtered out"),
        "{err}"
    );
    assert_eq!(lb.counters(SVC).unwrap().discard, 1);
}

fn pick_err(lb: &LoadBalancer) -> Error {
    choose_with(lb, &HeaderMap::new(), &[]).unwrap_err()
}

/// Case D4: an empty list is an error, not a `% 0`; a list shrinking from 3 to 1 between picks
/// never yields an index out of bounds.
#[test]
fn empty_and_shrinking_lists_are_safe() {
    for policy in Policy::ALL {
        let (lb, supplier) = balancer(policy, vec![]);
        assert!(pick_err(&lb).is_no_instance());
        supplier.set(SVC, (1..=3).map(|p| weighted(p, u32::from(p))).collect());
        for _ in 0..10 {
            ok(pick(&lb));
        }
        supplier.set(SVC, vec![instance(2)]);
        for _ in 0..10 {
            assert_eq!(&**pick(&lb).instance_id(), "i2");
        }
    }
}

#[test]
fn stats_survive_a_list_change() {
    let (lb, supplier) = balancer(Policy::LeastRequest, (1..=2).map(instance).collect());
    let held: Vec<Chosen> = (0..4).map(|_| pick(&lb)).collect();
    supplier.set(SVC, (1..=3).map(instance).collect());
    let states = lb.instance_states(SVC);
    let in_flight: u32 = states.iter().map(|s| s.in_flight).sum();
    assert_eq!(in_flight, 4);
    for c in held {
        ok(c);
    }
    assert_eq!(lb.counters(SVC).unwrap().active, 0);
}

/// An attempt that ends without a report (its call was dropped, or another observer replaced
/// the balancer's) stops counting as in flight, so least request does not shun its instance.
#[test]
fn an_attempt_dropped_unreported_is_no_longer_in_flight() {
    let (lb, _s) = balancer(Policy::LeastRequest, (1..=2).map(instance).collect());
    let dropped: Vec<Chosen> = (0..3).map(|_| pick(&lb)).collect();
    let observer: Arc<dyn feign_core::resolve::CallObserver> = Arc::new(NoObserver);
    let replaced = pick(&lb).with_observer(observer);
    assert_eq!(lb.counters(SVC).unwrap().active, 3);
    drop(dropped);
    assert_eq!(lb.counters(SVC).unwrap().active, 0);
    let states = lb.instance_states(SVC);
    assert!(states.iter().all(|s| s.in_flight == 0), "{states:?}");
    drop(replaced);
    // With a leaked count, least request would send (nearly) everything to the other one.
    let counts = shares(&lb, 1_000);
    assert!(
        counts.values().all(|&n| (400..=600).contains(&n)),
        "{counts:?}"
    );
}

struct NoObserver;

impl feign_core::resolve::CallObserver for NoObserver {
    fn on_complete(&self, _outcome: &AttemptOutcome<'_>, _elapsed: Duration) {}
}

fn connect_error() -> Error {
    Error::connect(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        "refused",
    ))
}

#[tokio::test(start_paused = true)]
async fn a_connect_failure_ejects_at_once_and_five_503s_eject_with_doubling() {
    let (lb, _s) = balancer(Policy::RoundRobin, (1..=10).map(instance).collect());
    // i1 refuses a connection: out at once.
    let c = pick_until(&lb, "i1");
    let error = connect_error();
    finish(c, &AttemptOutcome::Failed(&error), Duration::from_millis(1));
    assert_eq!(shares(&lb, 900).get("i1"), None);
    assert_eq!(lb.counters(SVC).unwrap().ejections, 1);

    // 30 s later it is back (ramping up), then five 503s in a row eject it for 60 s.
    tokio::time::advance(Duration::from_secs(31)).await;
    let mut failures = 0;
    while failures < 5 {
        let c = pick(&lb);
        if &**c.instance_id() == "i1" {
            finish(
                c,
                &AttemptOutcome::Response(StatusCode::SERVICE_UNAVAILABLE),
                Duration::from_millis(1),
            );
            failures += 1;
        } else {
            ok(c);
        }
    }
    assert_eq!(shares(&lb, 900).get("i1"), None);
    tokio::time::advance(Duration::from_secs(45)).await;
    assert_eq!(
        shares(&lb, 900).get("i1"),
        None,
        "the second ejection lasts 60 s"
    );
    tokio::time::advance(Duration::from_secs(20)).await;
    assert!(shares(&lb, 900).contains_key("i1"), "back after 60 s");
}

#[tokio::test(start_paused = true)]
async fn at_most_ten_percent_are_ejected_and_panic_balances_across_all() {
    let (lb, _s) = balancer(Policy::RoundRobin, (1..=10).map(instance).collect());
    let error = connect_error();
    for _ in 0..100 {
        let c = pick(&lb);
        if matches!(&**c.instance_id(), "i1" | "i2") {
            finish(c, &AttemptOutcome::Failed(&error), Duration::from_millis(1));
        } else {
            ok(c);
        }
    }
    let ejected = lb.instance_states(SVC).iter().filter(|s| s.ejected).count();
    assert_eq!(ejected, 1, "max(1, 10 %) of 10");

    // Two instances, one ejected: half out is not a panic (Envoy's rule), the other takes all.
    let (lb, _s) = balancer(Policy::RoundRobin, (1..=2).map(instance).collect());
    let c = pick_until(&lb, "i1");
    finish(c, &AttemptOutcome::Failed(&error), Duration::from_millis(1));
    assert_eq!(shares(&lb, 100).get("i2"), Some(&100));
    assert_eq!(lb.counters(SVC).unwrap().panic, 0);

    // One instance, ejected: more than half are out, so panic mode still serves it.
    let (lb, _s) = balancer(Policy::RoundRobin, vec![instance(1)]);
    let c = pick(&lb);
    finish(c, &AttemptOutcome::Failed(&error), Duration::from_millis(1));
    assert!(lb.instance_states(SVC)[0].ejected);
    assert_eq!(shares(&lb, 10).get("i1"), Some(&10));
    assert!(lb.counters(SVC).unwrap().panic > 0);
}

/// An ejection that ran out while the list was rebuilt is not counted twice as over: the
/// count of ejected instances stays right, so picks do not fall into panic mode for good.
#[tokio::test(start_paused = true)]
async fn an_ejection_that_expires_across_a_rebuild_leaves_no_panic_behind() {
    let (lb, supplier) = balancer(Policy::RoundRobin, (1..=10).map(instance).collect());
    let c = pick_until(&lb, "i1");
    let error = connect_error();
    finish(c, &AttemptOutcome::Failed(&error), Duration::from_millis(1));
    assert_eq!(lb.counters(SVC).unwrap().ejections, 1);

    // The ejection runs out, and the list changes before any pick has looked at i1.
    tokio::time::advance(Duration::from_secs(31)).await;
    supplier.set(SVC, (1..=11).map(instance).collect());
    let counts = shares(&lb, 1_100);
    assert!(counts.contains_key("i1"), "{counts:?}");
    assert_eq!(lb.counters(SVC).unwrap().panic, 0);

    // Ejection still works afterwards.
    let c = pick_until(&lb, "i2");
    finish(c, &AttemptOutcome::Failed(&error), Duration::from_millis(1));
    assert_eq!(shares(&lb, 1_100).get("i2"), None);
    assert_eq!(lb.counters(SVC).unwrap().panic, 0);
}

#[tokio::test(start_paused = true)]
async fn a_new_instance_ramps_up_over_the_slow_start_window() {
    let supplier = StaticSupplier::empty().with_instances(SVC, (1..=4).map(instance).collect());
    let lb = LoadBalancer::builder()
        .supplier(supplier.clone())
        .policy(Policy::Random)
        .seed(7)
        .build();
    ok(pick(&lb));
    supplier.set(SVC, (1..=5).map(instance).collect());
    let early = shares(&lb, 20_000).get("i5").copied().unwrap_or(0) as f64 / 20_000.0;
    tokio::time::advance(Duration::from_secs(15)).await;
    let middle = shares(&lb, 20_000).get("i5").copied().unwrap_or(0) as f64 / 20_000.0;
    tokio::time::advance(Duration::from_secs(16)).await;
    let late = shares(&lb, 20_000).get("i5").copied().unwrap_or(0) as f64 / 20_000.0;
    assert!(early < 0.05, "early share {early}");
    assert!(middle > early && middle < late, "{early} {middle} {late}");
    assert!(
        (late - 0.2).abs() < 0.02,
        "full share after the window: {late}"
    );
}

#[tokio::test(start_paused = true)]
async fn zone_preference_fails_over_and_comes_back() {
    let instances = vec![
        instance(1).with_metadata("zone", "z1"),
        instance(2).with_metadata("zone", "Z1"),
        instance(3).with_metadata("zone", "z2"),
    ];
    let supplier = StaticSupplier::empty().with_instances(SVC, instances);
    let lb = LoadBalancer::builder()
        .supplier(supplier)
        .zone_preference(ZonePreference::new("z1"))
        .ejection(Ejection::disabled())
        .seed(1)
        .build();
    let counts = shares(&lb, 100);
    assert_eq!(counts.get("i3"), None, "{counts:?}");
    // Both z1 instances fail.
    let error = connect_error();
    let mut failed = std::collections::HashSet::new();
    while failed.len() < 2 {
        let c = pick(&lb);
        failed.insert(c.instance_id().to_string());
        finish(c, &AttemptOutcome::Failed(&error), Duration::from_millis(1));
    }
    let counts = shares(&lb, 100);
    assert_eq!(counts.get("i3"), Some(&100), "failed over: {counts:?}");
    tokio::time::advance(Duration::from_secs(20 * 60 + 1)).await;
    let counts = shares(&lb, 100);
    assert_eq!(
        counts.get("i3"),
        None,
        "back to the preferred zone: {counts:?}"
    );
}

#[test]
fn hints_select_instances_and_fall_back_to_all() {
    let instances = vec![
        instance(1).with_metadata("hint", "blue"),
        instance(2),
        instance(3).with_metadata("hint", "blue"),
    ];
    let supplier = StaticSupplier::empty().with_instances(SVC, instances);
    let lb = LoadBalancer::builder()
        .supplier(supplier)
        .hints(Hints::new())
        .seed(1)
        .build();
    let mut headers = HeaderMap::new();
    headers.insert("x-sc-lb-hint", "blue".parse().unwrap());
    for _ in 0..50 {
        let c = choose_with(&lb, &headers, &[]).unwrap();
        assert_ne!(&**c.instance_id(), "i2");
        ok(c);
    }
    headers.insert("x-sc-lb-hint", "green".parse().unwrap());
    let seen: std::collections::HashSet<String> = (0..30)
        .map(|_| {
            choose_with(&lb, &headers, &[])
                .unwrap()
                .instance_id()
                .to_string()
        })
        .collect();
    assert_eq!(seen.len(), 3, "no match falls back to all");
}

#[test]
fn canary_gets_its_share_and_flagged_requests() {
    let instances = vec![
        instance(1),
        instance(2),
        instance(3).with_metadata("canary", "true"),
    ];
    let supplier = StaticSupplier::empty().with_instances(SVC, instances);
    let lb = LoadBalancer::builder()
        .supplier(supplier)
        .canary(Canary::share(0.1).header(http::HeaderName::from_static("x-canary")))
        .seed(3)
        .build();
    let counts = shares(&lb, 100_000);
    let canary = counts.get("i3").copied().unwrap_or(0) as f64 / 100_000.0;
    assert!((canary - 0.1).abs() < 0.01, "canary share {canary}");
    let mut headers = HeaderMap::new();
    headers.insert("x-canary", "1".parse().unwrap());
    for _ in 0..20 {
        assert_eq!(
            &**choose_with(&lb, &headers, &[]).unwrap().instance_id(),
            "i3"
        );
    }
}

#[test]
fn version_routing_and_sticky_sessions_combine_with_zone_and_hint() {
    let instances = vec![
        instance(1)
            .with_metadata("version", "1")
            .with_metadata("zone", "z1"),
        instance(2)
            .with_metadata("version", "2")
            .with_metadata("zone", "z1"),
        instance(3)
            .with_metadata("version", "2")
            .with_metadata("zone", "z2"),
    ];
    let supplier = StaticSupplier::empty().with_instances(SVC, instances);
    let lb = LoadBalancer::builder()
        .supplier(supplier)
        .zone_preference(ZonePreference::new("z1"))
        .version_routing(VersionRouting::header(http::HeaderName::from_static(
            "x-version",
        )))
        .sticky_session(StickySession::new())
        .seed(5)
        .build();
    let mut headers = HeaderMap::new();
    headers.insert("x-version", "2".parse().unwrap());
    for _ in 0..30 {
        assert_eq!(
            &**choose_with(&lb, &headers, &[]).unwrap().instance_id(),
            "i2",
            "zone z1 and version 2"
        );
    }
    headers.insert(
        http::header::COOKIE,
        "theme=dark; sc-lb-instance-id=i3".parse().unwrap(),
    );
    for _ in 0..10 {
        assert_eq!(
            &**choose_with(&lb, &headers, &[]).unwrap().instance_id(),
            "i3",
            "sticky"
        );
    }
}

#[derive(Default)]
struct Recorder {
    starts: AtomicUsize,
    requests: AtomicUsize,
    completions: Mutex<Vec<CompletionStatus>>,
}

struct Hook(Arc<Recorder>);

impl LifecycleHook for Hook {
    fn on_start(&self, _service: &str) {
        self.0.starts.fetch_add(1, Ordering::Relaxed);
    }
    fn on_start_request(&self, _service: &str, _instance: &ServiceInstance) {
        self.0.requests.fetch_add(1, Ordering::Relaxed);
    }
    fn on_complete(&self, completion: &Completion<'_>) {
        self.0.completions.lock().unwrap().push(completion.status);
    }
}

#[test]
fn lifecycle_hooks_and_spring_named_counters() {
    let recorder = Arc::new(Recorder::default());
    let supplier = StaticSupplier::empty().with_instances(SVC, (1..=2).map(instance).collect());
    let lb = LoadBalancer::builder()
        .supplier(supplier)
        .lifecycle(Hook(recorder.clone()))
        .service(
            "empty-service",
            ServiceConfig::new().supplier(StaticSupplier::empty()),
        )
        .build();
    ok(pick(&lb));
    let error = connect_error();
    finish(pick(&lb), &AttemptOutcome::Failed(&error), Duration::ZERO);
    finish(pick(&lb), &AttemptOutcome::Discarded, Duration::ZERO);
    let held = pick(&lb);
    let headers = HeaderMap::new();
    assert!(lb
        .choose(&ChooseRequest::new(
            "empty-service",
            "k",
            &Method::GET,
            &headers
        ))
        .is_err());

    let counters = lb.counters(SVC).unwrap();
    assert_eq!(
        (
            counters.active,
            counters.success,
            counters.failed,
            counters.discard
        ),
        (1, 1, 1, 1)
    );
    let named = counters.named();
    assert_eq!(named[0], ("loadbalancer.requests.active", 1));
    assert_eq!(lb.counters("empty-service").unwrap().discard, 1);
    assert_eq!(recorder.starts.load(Ordering::Relaxed), 5);
    assert_eq!(recorder.requests.load(Ordering::Relaxed), 4);
    assert_eq!(
        *recorder.completions.lock().unwrap(),
        [
            CompletionStatus::Success,
            CompletionStatus::Failed,
            CompletionStatus::Discard,
            CompletionStatus::Discard
        ]
    );
    ok(held);
}

#[test]
fn services_have_their_own_policy_and_supplier() {
    let shared = StaticSupplier::empty().with_instances(SVC, (1..=3).map(instance).collect());
    let own = StaticSupplier::empty().with_instances(
        "billing",
        vec![ServiceInstance::new("billing", "127.0.0.1", 9).with_instance_id("b1")],
    );
    let lb = LoadBalancer::builder()
        .supplier(shared)
        .service(
            "Billing",
            ServiceConfig::new()
                .supplier(own)
                .policy(Policy::LeastRequest),
        )
        .build();
    let headers = HeaderMap::new();
    let c = lb
        .choose(&ChooseRequest::new("billing", "k", &Method::GET, &headers))
        .unwrap();
    assert_eq!(&**c.instance_id(), "b1");
    assert_eq!(&**c.base_url(), "http://127.0.0.1:9");
    assert!(lb.retry_policy("billing").is_some());
    ok(pick(&lb));
}

#[test]
fn active_counts_attempts_to_an_instance_that_left_the_list() {
    let (lb, supplier) = balancer(Policy::RoundRobin, vec![instance(1), instance(2)]);
    let held: Vec<Chosen> = (0..4).map(|_| pick(&lb)).collect();
    assert_eq!(lb.counters(SVC).unwrap().active, 4);
    supplier.set(SVC, vec![instance(2)]);
    let more = pick(&lb);
    assert_eq!(&**more.instance_id(), "i2");
    assert_eq!(
        lb.counters(SVC).unwrap().active,
        5,
        "i1's two attempts still count"
    );
    for c in held.into_iter().chain([more]) {
        ok(c);
    }
    assert_eq!(lb.counters(SVC).unwrap().active, 0);
}

/// Picks once more from inside its own `on_start_request`, as a hook that calls the same
/// service would.
struct PicksFromAHook {
    lb: std::sync::OnceLock<LoadBalancer>,
    nested: Mutex<Vec<String>>,
}

impl LifecycleHook for PicksFromAHook {
    fn on_start_request(&self, _service: &str, instance: &ServiceInstance) {
        let Some(lb) = self.lb.get() else { return };
        let mut nested = self.nested.lock().unwrap();
        if nested.is_empty() {
            nested.push(instance.instance_id().to_owned());
            drop(nested);
            let inner = pick(lb);
            self.nested
                .lock()
                .unwrap()
                .push(inner.instance_id().to_string());
            ok(inner);
        }
    }
}

#[test]
fn a_pick_from_inside_a_pick_reads_the_snapshot_too() {
    let hook = Arc::new(PicksFromAHook {
        lb: std::sync::OnceLock::new(),
        nested: Mutex::new(Vec::new()),
    });
    struct Shared(Arc<PicksFromAHook>);
    impl LifecycleHook for Shared {
        fn on_start_request(&self, service: &str, instance: &ServiceInstance) {
            self.0.on_start_request(service, instance);
        }
    }
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::empty().with_instances(SVC, vec![instance(1), instance(2)]))
        .lifecycle(Shared(hook.clone()))
        .seed(3)
        .build();
    let _ = hook.lb.set(lb.clone());
    let outer = pick(&lb);
    ok(outer);
    let nested = hook.nested.lock().unwrap().clone();
    assert_eq!(nested.len(), 2, "{nested:?}");
    assert_ne!(
        nested[0], nested[1],
        "round robin moved on inside the hook: {nested:?}"
    );
}
