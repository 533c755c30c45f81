//! Registry cache performance: parse and swap a 10,000-instance registry, apply a one-change
//! delta, and the memory the cached registry holds.
//!
//! Run with `cargo bench -p feign-eureka --bench client_registry`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use feign_eureka::model::{ActionType, Application, Applications, InstanceInfo, InstanceStatus};
use feign_eureka::RegistryCache;

const APPS: usize = 200;
const PER_APP: usize = 50;

fn instance(app: usize, n: usize) -> InstanceInfo {
    let name = format!("service-{app:03}");
    let ip = format!("10.{}.{}.{}", app / 250, app % 250, n + 1);
    let mut info = InstanceInfo::new(&name, ip.clone(), ip.clone(), 8080);
    info.instance_id = Some(format!("{ip}:{name}:8080"));
    info.metadata
        .insert("zone".into(), format!("zone-{}", n % 3));
    info.metadata
        .insert("management.port".into(), "8081".into());
    info.home_page_url = Some(format!("http://{ip}:8080/"));
    info.status_page_url = Some(format!("http://{ip}:8080/actuator/info"));
    info.health_check_url = Some(format!("http://{ip}:8080/actuator/health"));
    info.vip_address = Some(name.clone());
    info.secure_vip_address = Some(name);
    info.last_updated_timestamp = Some(1_732_881_000_000);
    info.last_dirty_timestamp = Some(1_732_881_000_000);
    info.action_type = Some(ActionType::Added);
    info
}

fn registry() -> Applications {
    Applications::new(
        (0..APPS)
            .map(|a| {
                Application::new(
                    &format!("service-{a:03}"),
                    (0..PER_APP).map(|n| instance(a, n)).collect(),
                )
            })
            .collect(),
    )
}

fn one_change_delta(full: &Applications) -> Applications {
    let mut changed = instance(7, 3);
    changed.status = InstanceStatus::Down;
    let mut delta = Applications::new(vec![Application::new("service-007", vec![changed])]);
    let mut statuses: Vec<InstanceStatus> = full
        .applications
        .iter()
        .flat_map(|a| a.instances.iter().map(|i| i.status))
        .collect();
    statuses.pop();
    statuses.push(InstanceStatus::Down);
    delta.apps_hashcode = feign_eureka::model::reconcile_hash(statuses);
    delta.versions_delta = 2;
    delta
}

fn bench(c: &mut Criterion) {
    let full = registry();
    let json = full.to_json().into_bytes();
    println!(
        "registry document: {} instances, {} bytes",
        full.instance_count(),
        json.len()
    );

    let cache = RegistryCache::new();
    c.bench_function("parse_and_swap_10k_instances", |b| {
        b.iter(|| cache.replace_from_json(&json).expect("valid registry"))
    });

    let delta = one_change_delta(&full);
    let delta_json = delta.to_json().into_bytes();
    c.bench_function("apply_one_change_delta_10k", |b| {
        b.iter_batched(
            || {
                let cache = RegistryCache::new();
                cache.replace_from_json(&json).expect("valid registry");
                cache
            },
            |cache| {
                let matched = cache.apply_delta_json(&delta_json).expect("valid delta");
                assert!(matched, "hash must match after the delta");
                cache
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);
