//! Deterministic subsetting: how evenly many clients spread over a large service, how few move
//! when the service's list changes, and the balancer (from its builder and from
//! `application.yml`) picking only within its client's subset.

use std::collections::{BTreeSet, HashMap};

use feign_config::Config;
use feign_core::{ChooseRequest, Resolver};
use feign_lb::{LoadBalancer, ServiceInstance, SlowStart, StaticSupplier, Subset};
use http::{HeaderMap, Method};

const SVC: &str = "orders";

fn instance(i: usize) -> ServiceInstance {
    ServiceInstance::new(SVC, format!("10.0.{}.{}", i / 250, i % 250), 8080)
        .with_instance_id(format!("orders-{i}"))
}

fn fleet(n: usize) -> Vec<ServiceInstance> {
    (0..n).map(instance).collect()
}

fn ids(instances: &[ServiceInstance]) -> BTreeSet<String> {
    instances
        .iter()
        .map(|i| i.instance_id().to_owned())
        .collect()
}

/// The subsets of `clients` clients (ids `client-0`, `client-1`, ...).
fn subsets(clients: usize, instances: &[ServiceInstance], size: usize) -> Vec<BTreeSet<String>> {
    (0..clients)
        .map(|c| {
            ids(&Subset::new(format!("client-{c}"))
                .size(size)
                .select(instances))
        })
        .collect()
}

/// 1,000 clients over 300 instances, 10 each: 33⅓ clients per instance on average. Each
/// client's subset is uniformly random, so an instance's load is binomial (standard deviation
/// 5.7); the bound asserted is every instance within 50 % of the mean, about three standard
/// deviations.
#[test]
fn a_thousand_clients_spread_evenly_over_three_hundred_instances() {
    let instances = fleet(300);
    let all = subsets(1_000, &instances, 10);
    assert!(all.iter().all(|s| s.len() == 10));
    let mut load: HashMap<&str, usize> = HashMap::new();
    for subset in &all {
        for id in subset {
            *load.entry(id.as_str()).or_default() += 1;
        }
    }
    assert_eq!(load.len(), 300, "every instance has clients");
    let mean = 10_000.0 / 300.0;
    let (min, max) = (
        *load.values().min().unwrap() as f64,
        *load.values().max().unwrap() as f64,
    );
    let variance = load
        .values()
        .map(|&l| (l as f64 - mean).powi(2))
        .sum::<f64>()
        / 300.0;
    println!(
        "clients per instance: mean {mean:.1}, min {min}, max {max}, sd {:.1}",
        variance.sqrt()
    );
    assert!(min >= 0.5 * mean && max <= 1.5 * mean, "{min} – {max}");
    assert!(variance.sqrt() < 8.0, "sd {}", variance.sqrt());
}

/// Removing an instance changes only the subsets that held it, each by that one instance;
/// adding one changes only the subsets it enters, each by one.
#[test]
fn a_change_of_the_list_moves_only_the_clients_it_must() {
    let instances = fleet(300);
    let before = subsets(1_000, &instances, 10);

    let mut fewer = instances.clone();
    let gone = fewer.remove(150);
    let after = subsets(1_000, &fewer, 10);
    let mut moved = 0;
    for (old, new) in before.iter().zip(&after) {
        let held = old.contains(gone.instance_id());
        if held {
            moved += 1;
            assert_eq!(
                old.difference(new).collect::<Vec<_>>(),
                [gone.instance_id()]
            );
            assert_eq!(new.difference(old).count(), 1);
        } else {
            assert_eq!(old, new, "a client that did not hold it keeps its subset");
        }
    }
    println!("removing one of 300 instances moved {moved} of 1000 clients by one instance");
    assert!(moved > 0 && moved < 70, "{moved}");

    let mut more = instances;
    more.push(instance(300));
    let after = subsets(1_000, &more, 10);
    let mut moved = 0;
    for (old, new) in before.iter().zip(&after) {
        if new.contains("orders-300") {
            moved += 1;
            assert_eq!(new.difference(old).collect::<Vec<_>>(), ["orders-300"]);
            assert_eq!(old.difference(new).count(), 1);
        } else {
            assert_eq!(old, new);
        }
    }
    println!("adding a 301st instance moved {moved} of 1000 clients by one instance");
    assert!(moved > 0 && moved < 70, "{moved}");
}

#[test]
fn a_service_no_larger_than_the_subset_is_used_whole_and_ids_decide() {
    let small = fleet(7);
    assert_eq!(Subset::new("c").size(10).select(&small), small);
    assert_eq!(Subset::new("c").size(7).select(&small), small);
    let large = fleet(50);
    let a = Subset::new("client-a").size(5);
    assert_eq!(a.select(&large), a.select(&large), "deterministic");
    assert_ne!(
        ids(&a.select(&large)),
        ids(&Subset::new("client-b").size(5).select(&large)),
        "another id, another subset"
    );
    let picked = a.select(&large);
    let positions: Vec<usize> = picked
        .iter()
        .map(|p| large.iter().position(|i| i == p).unwrap())
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "in the list's order"
    );
    assert_eq!(
        Subset::new("d").size(100).select(&fleet(101)).len(),
        100,
        "Spring's default"
    );
}

/// The instances `lb` picks for [`SVC`] over `n` picks.
fn picked(lb: &LoadBalancer, n: usize) -> BTreeSet<String> {
    let headers = HeaderMap::new();
    (0..n)
        .map(|_| {
            let request = ChooseRequest::new(SVC, "Orders#get", &Method::GET, &headers);
            lb.choose(&request)
                .expect("an instance")
                .instance_id()
                .to_string()
        })
        .collect()
}

#[test]
fn the_balancer_picks_only_within_its_subset() {
    let instances = fleet(50);
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::empty().with_instances(SVC, instances.clone()))
        .subset(Subset::new("billing-1").size(5))
        .slow_start(SlowStart::disabled())
        .seed(7)
        .build();
    let expected = ids(&Subset::new("billing-1").size(5).select(&instances));
    assert_eq!(picked(&lb, 200), expected);
}

#[test]
fn the_subset_preset_from_application_yml() {
    let instances = fleet(50);
    let yaml = "spring.cloud.loadbalancer:\n  configurations: subset\n  subset:\n    instance-id: billing-1\n    size: 5\n";
    let config = Config::from_yaml_str(yaml, "application.yml").unwrap();
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::empty().with_instances(SVC, instances.clone()))
        .slow_start(SlowStart::disabled())
        .config(&config)
        .unwrap()
        .build();
    let expected = ids(&Subset::new("billing-1").size(5).select(&instances));
    assert_eq!(picked(&lb, 200), expected);

    // Without an id, a random one: still `size` instances.
    let yaml = "spring.cloud.loadbalancer:\n  configurations: subset\n  subset.size: 4\n";
    let config = Config::from_yaml_str(yaml, "application.yml").unwrap();
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::empty().with_instances(SVC, instances))
        .config(&config)
        .unwrap()
        .build();
    assert_eq!(picked(&lb, 200).len(), 4);

    for (yaml, key) in [
        (
            "spring.cloud.loadbalancer:\n  configurations: subset\n  subset.size: 0\n",
            "spring.cloud.loadbalancer.subset.size",
        ),
        (
            "spring.cloud.loadbalancer.subset.size: many\n",
            "spring.cloud.loadbalancer.subset.size",
        ),
    ] {
        let config = Config::from_yaml_str(yaml, "application.yml").unwrap();
        let err = LoadBalancer::builder().config(&config).unwrap_err();
        assert!(err.to_string().contains(key), "{err}");
    }
}
