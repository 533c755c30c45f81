//! Load on the embedded registry: 10,000 registered instances, then renewals and full fetches
//! at fixed rates together, with latency percentiles and memory per instance.
//!
//! Run with `cargo bench -p feign-eureka-server --bench server_load`. Environment knobs:
//! `FEIGN_BENCH_INSTANCES` (10000), `FEIGN_BENCH_RENEWALS` per second (1000),
//! `FEIGN_BENCH_FETCHES` per second (200), `FEIGN_BENCH_SECS` (10, at most 60).
//!
//! Requests are issued open-loop on a fixed schedule and latency is measured from the scheduled
//! start, so a slow server cannot hide its queueing delay. The registry and the load generator
//! run on separate runtimes of one process.

use std::sync::Arc;
use std::time::{Duration, Instant};

use feign_eureka_server::EurekaServer;
use tokio::sync::Mutex;
use tokio::time::MissedTickBehavior;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Resident set size in bytes, from `/proc/self/statm` (Linux only; 0 elsewhere).
fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u64>().ok())
        })
        .map_or(0, |pages| pages * 4096)
}

fn body(i: u64) -> String {
    let port = 10_000 + (i % 50_000);
    let app = format!("SVC-{}", i % 100);
    let vip = app.to_ascii_lowercase();
    format!(
        r#"{{"instance":{{"instanceId":"10.0.{a}.{b}:{vip}:{port}","hostName":"10.0.{a}.{b}","app":"{app}","ipAddr":"10.0.{a}.{b}","status":"UP","overriddenStatus":"UNKNOWN","port":{{"$":{port},"@enabled":"true"}},"securePort":{{"$":443,"@enabled":"false"}},"countryId":1,"dataCenterInfo":{{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}},"leaseInfo":{{"renewalIntervalInSecs":30,"durationInSecs":90}},"metadata":{{"zone":"zone-{z}","management.port":"{port}"}},"homePageUrl":"http://10.0.{a}.{b}:{port}/","statusPageUrl":"http://10.0.{a}.{b}:{port}/actuator/info","healthCheckUrl":"http://10.0.{a}.{b}:{port}/actuator/health","vipAddress":"{vip}","secureVipAddress":"{vip}","isCoordinatingDiscoveryServer":"false","lastUpdatedTimestamp":"1732881099990","lastDirtyTimestamp":"1732881099990"}}}}"#,
        a = i / 250,
        b = i % 250,
        z = i % 3,
    )
}

fn renew_path(i: u64) -> String {
    let port = 10_000 + (i % 50_000);
    let vip = format!("svc-{}", i % 100);
    format!(
        "apps/SVC-{}/10.0.{}.{}:{vip}:{port}?status=UP&lastDirtyTimestamp=1732881099990",
        i % 100,
        i / 250,
        i % 250
    )
}

#[derive(Default)]
struct Samples {
    micros: Vec<u64>,
    errors: u64,
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx] as f64 / 1000.0
}

fn report(name: &str, samples: &mut Samples, secs: f64, target: u64) {
    samples.micros.sort_unstable();
    let s = &samples.micros;
    println!(
        "{name:<9} target {target:>5}/s  done {:>8.1}/s  errors {:>3}  p50 {:>6.2} ms  p90 {:>6.2} ms  p99 {:>6.2} ms  max {:>7.2} ms",
        s.len() as f64 / secs,
        samples.errors,
        percentile(s, 0.50),
        percentile(s, 0.90),
        percentile(s, 0.99),
        percentile(s, 1.0),
    );
}

fn main() {
    let instances = env("FEIGN_BENCH_INSTANCES", 10_000);
    let renew_rate = env("FEIGN_BENCH_RENEWALS", 1_000).max(1);
    let fetch_rate = env("FEIGN_BENCH_FETCHES", 200).max(1);
    let secs = env("FEIGN_BENCH_SECS", 10).clamp(1, 60);

    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("registry")
        .enable_all()
        .build()
        .expect("server runtime");
    let load_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("load")
        .enable_all()
        .build()
        .expect("load runtime");

    let rss_start = rss_bytes();
    let server = server_rt
        .block_on(
            EurekaServer::builder()
                .bind("127.0.0.1:0")
                .registration_rate_limit(None)
                .start(),
        )
        .expect("registry starts");
    let base = server.url().to_owned();
    let client = reqwest::Client::builder()
        .no_gzip()
        .no_proxy()
        .pool_max_idle_per_host(256)
        .build()
        .expect("client");

    load_rt.block_on(async {
        let started = Instant::now();
        let next = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut workers = Vec::new();
        for _ in 0..32 {
            let (client, base, next) = (client.clone(), base.clone(), next.clone());
            workers.push(tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= instances {
                        return;
                    }
                    let status = client
                        .post(format!("{base}apps/SVC-{}", i % 100))
                        .header("Content-Type", "application/json")
                        .body(body(i))
                        .send()
                        .await
                        .map(|r| r.status().as_u16());
                    assert_eq!(status.ok(), Some(204), "registration {i}");
                }
            }));
        }
        for w in workers {
            w.await.expect("registration worker");
        }
        println!(
            "registered {instances} instances in {:.2} s",
            started.elapsed().as_secs_f64()
        );
    });

    // Warm the response cache once, then measure memory.
    let full = load_rt.block_on(async {
        let response = client
            .get(format!("{base}apps/"))
            .header("Accept", "application/json")
            .header("Accept-Encoding", "gzip")
            .send()
            .await
            .expect("full fetch");
        response.bytes().await.expect("body").len()
    });
    let rss_loaded = rss_bytes();
    println!(
        "full registry: {full} bytes gzipped; RSS {:.1} MiB -> {:.1} MiB, about {:.0} bytes per instance (including cached payloads)",
        rss_start as f64 / 1048576.0,
        rss_loaded as f64 / 1048576.0,
        rss_loaded.saturating_sub(rss_start) as f64 / instances as f64,
    );

    let renewals = Arc::new(Mutex::new(Samples::default()));
    let fetches = Arc::new(Mutex::new(Samples::default()));
    load_rt.block_on(async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        let spawn_stream = |rate: u64, fetch: bool, sink: Arc<Mutex<Samples>>| {
            let (client, base) = (client.clone(), base.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / rate));
                tick.set_missed_tick_behavior(MissedTickBehavior::Burst);
                let mut n = 0u64;
                let mut inflight = Vec::new();
                while tokio::time::Instant::now() < deadline {
                    let scheduled = tick.tick().await;
                    let (client, base, sink) = (client.clone(), base.clone(), sink.clone());
                    let i = (n * 7919) % instances;
                    n += 1;
                    inflight.push(tokio::spawn(async move {
                        let request = if fetch {
                            client
                                .get(format!("{base}apps/"))
                                .header("Accept", "application/json")
                                .header("Accept-Encoding", "gzip")
                        } else {
                            client.put(format!("{base}{}", renew_path(i)))
                        };
                        let ok = match request.send().await {
                            Ok(r) if r.status().is_success() => r.bytes().await.is_ok(),
                            _ => false,
                        };
                        let micros = scheduled.elapsed().as_micros() as u64;
                        let mut s = sink.lock().await;
                        if ok {
                            s.micros.push(micros);
                        } else {
                            s.errors += 1;
                        }
                    }));
                }
                for t in inflight {
                    let _ = t.await;
                }
            })
        };
        let r = spawn_stream(renew_rate, false, renewals.clone());
        let f = spawn_stream(fetch_rate, true, fetches.clone());
        let _ = tokio::join!(r, f);
    });

    println!("{secs} s with {instances} instances:");
    let mut r = load_rt.block_on(renewals.lock()).micros.clone();
    let mut rs = Samples {
        micros: std::mem::take(&mut r),
        errors: load_rt.block_on(renewals.lock()).errors,
    };
    let mut f = load_rt.block_on(fetches.lock()).micros.clone();
    let mut fs = Samples {
        micros: std::mem::take(&mut f),
        errors: load_rt.block_on(fetches.lock()).errors,
    };
    report("renewals", &mut rs, secs as f64, renew_rate);
    report("fetches", &mut fs, secs as f64, fetch_rate);
    server_rt.block_on(server.shutdown());
}
