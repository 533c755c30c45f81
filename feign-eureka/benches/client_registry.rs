//! Registry cache performance: parse and swap a 10,000-instance registry (into an empty cache,
//! over a registry in which every instance changed, and over an unchanged one), apply a
//! one-change delta, and the memory the cached registry holds.
//!
//! Run with `cargo bench -p feign-eureka --bench client_registry`.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{criterion_group, BatchSize, Criterion};
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

/// The same registry with every instance changed (a newer `lastDirtyTimestamp`).
fn registry_all_changed() -> Applications {
    let mut apps = registry();
    for info in apps
        .applications
        .iter_mut()
        .flat_map(|a| a.instances.iter_mut())
    {
        info.last_dirty_timestamp = Some(1_732_881_999_000);
    }
    apps
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

    c.bench_function("parse_only_10k_instances", |b| {
        b.iter(|| Applications::from_json(&json).expect("valid registry"));
    });

    c.bench_function("parse_and_swap_10k_instances_into_empty_cache", |b| {
        b.iter_batched(
            RegistryCache::new,
            |cache| {
                cache.replace_from_json(&json).expect("valid registry");
                cache
            },
            BatchSize::LargeInput,
        );
    });

    let changed_json = registry_all_changed().to_json().into_bytes();
    let cache = RegistryCache::new();
    let mut flip = false;
    c.bench_function("parse_and_swap_10k_instances_all_changed", |b| {
        b.iter(|| {
            flip = !flip;
            let doc = if flip { &changed_json } else { &json };
            cache.replace_from_json(doc).expect("valid registry");
        });
    });

    let cache = RegistryCache::new();
    c.bench_function("parse_and_swap_10k_instances_unchanged", |b| {
        b.iter(|| cache.replace_from_json(&json).expect("valid registry"));
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
        );
    });
}

/// Resident memory of this process in bytes, from `/proc/self/statm` (Linux; 0 elsewhere).
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// The memory a 10,000-instance cache holds: resident memory grown by building and keeping
/// `COPIES` independent caches from the same document, divided by `COPIES`.
fn memory_report() {
    const COPIES: usize = 4;
    let json = registry().to_json().into_bytes();
    // Warm the allocator with one parse whose memory is returned before measuring.
    drop(RegistryCache::new().replace_from_json(&json));
    let before = resident_bytes();
    let caches: Vec<RegistryCache> = (0..COPIES)
        .map(|_| {
            let cache = RegistryCache::new();
            cache.replace_from_json(&json).expect("valid registry");
            cache
        })
        .collect();
    let after = resident_bytes();
    let per_cache = after.saturating_sub(before) / COPIES;
    println!(
        "memory: a 10,000-instance cache holds about {:.1} MiB ({} bytes per instance; resident growth over {COPIES} caches, {} instances each)",
        per_cache as f64 / (1024.0 * 1024.0),
        per_cache / caches[0].instance_count().max(1),
        caches[0].instance_count(),
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(5));
    targets = bench
}

/// CPU time this thread has run, from `/proc/thread-self/schedstat` (Linux; zero elsewhere).
/// Unlike wall time it does not grow while other processes hold the cores.
fn thread_cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let nanos: u64 = stat
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Duration::from_nanos(nanos)
}

/// Parse-and-swap and one-change-delta costs in CPU time per operation (mean over a few runs).
fn cpu_time_report() {
    const RUNS: u32 = 10;
    let full = registry();
    let json = full.to_json().into_bytes();
    let changed_json = registry_all_changed().to_json().into_bytes();

    // Into an empty cache (a client's first fetch); dropping the caches is not counted.
    let mut cold = Duration::ZERO;
    let mut caches = Vec::new();
    for _ in 0..RUNS {
        let cache = RegistryCache::new();
        let start = thread_cpu_time();
        cache.replace_from_json(&json).expect("valid registry");
        cold += thread_cpu_time() - start;
        caches.push(cache);
    }
    drop(caches);
    let cold = cold / RUNS;

    // Over a registry in which every instance changed (freeing the old one is counted).
    let cache = RegistryCache::new();
    cache.replace_from_json(&json).expect("valid registry");
    let start = thread_cpu_time();
    for run in 0..RUNS {
        let doc = if run % 2 == 0 { &changed_json } else { &json };
        cache.replace_from_json(doc).expect("valid registry");
    }
    let changed = (thread_cpu_time() - start) / RUNS;

    // Over an unchanged registry (a periodic full fetch).
    let start = thread_cpu_time();
    for _ in 0..RUNS {
        cache.replace_from_json(&json).expect("valid registry");
    }
    let unchanged = (thread_cpu_time() - start) / RUNS;

    // The server repeats a delta for three minutes; applying it again does the same work.
    let delta_json = one_change_delta(&full).to_json().into_bytes();
    let start = thread_cpu_time();
    for _ in 0..RUNS * 100 {
        assert!(cache.apply_delta_json(&delta_json).expect("valid delta"));
    }
    let delta = (thread_cpu_time() - start) / (RUNS * 100);
    let start = thread_cpu_time();
    for _ in 0..RUNS {
        Applications::from_json(&json).expect("valid registry");
    }
    let parse = (thread_cpu_time() - start) / RUNS;
    println!("cpu time: parse and swap of 10,000 instances: into an empty cache {cold:?}, all changed {changed:?}, unchanged {unchanged:?} (parse alone {parse:?}); one-change delta {delta:?}");
}

fn main() {
    memory_report();
    cpu_time_report();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
