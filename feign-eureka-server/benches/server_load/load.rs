//! The load, the same for every registry: registrations as fast as 32 callers go, then renewals
//! and full fetches together, open-loop at fixed rates.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use feign_bench::stats::{micros, Latencies};
use tokio::runtime::Handle;

/// What the load asks of a registry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// Instances registered, in 100 applications.
    pub(crate) instances: u64,
    /// Renewals per second.
    pub(crate) renewals: u32,
    /// Full fetches per second.
    pub(crate) fetches: u32,
    /// How long renewals and fetches run.
    pub(crate) duration: Duration,
}

/// One operation's calls over a run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outcome {
    /// Latency of each successful call, from when it was due.
    pub(crate) latencies: Latencies,
    /// Calls that failed or answered an error status.
    pub(crate) errors: u64,
}

/// Renewals and full fetches of one run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Mixed {
    /// `PUT /eureka/apps/{app}/{id}`.
    pub(crate) renewals: Outcome,
    /// `GET /eureka/apps/`, as JSON, gzipped.
    pub(crate) fetches: Outcome,
}

/// An HTTP client that keeps gzipped bodies as they come (decompressing is the client's cost,
/// not the registry's) and gives up on a call after 10 s.
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_gzip()
        .no_proxy()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client")
}

/// Registers `plan.instances` instances from 32 concurrent callers; returns how long it took
/// and how many registrations failed.
pub(crate) async fn register(client: &reqwest::Client, url: &str, plan: Plan) -> (Duration, u64) {
    let started = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for _ in 0..32 {
        let (client, url, next, errors) =
            (client.clone(), url.to_owned(), next.clone(), errors.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= plan.instances {
                    return;
                }
                let request = client
                    .post(format!("{url}apps/SVC-{}", i % 100))
                    .header("Content-Type", "application/json")
                    .body(registration(i));
                if !succeeds(request).await {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    for worker in workers {
        let _ = worker.await;
    }
    (started.elapsed(), errors.load(Ordering::Relaxed))
}

/// The gzipped size of a full fetch, or `None` when it fails.
pub(crate) async fn full_fetch_size(client: &reqwest::Client, url: &str) -> Option<usize> {
    let response = full_fetch(client, url).send().await.ok()?;
    let body = response.error_for_status().ok()?.bytes().await.ok()?;
    Some(body.len())
}

/// Renewals and full fetches at the plan's rates for its duration, each stream paced by a
/// thread of its own and its calls run on `runtime`.
pub(crate) fn mixed(runtime: &Handle, client: &reqwest::Client, url: &str, plan: Plan) -> Mixed {
    let renewed = AtomicU64::new(0);
    thread::scope(|scope| {
        let renewals = scope.spawn(|| renewals(runtime, client, url, plan, &renewed));
        let fetches = scope.spawn(|| {
            open_loop(runtime, plan.fetches, plan.duration, |_| {
                succeeds(full_fetch(client, url))
            })
        });
        Mixed {
            renewals: renewals.join().expect("renewal pacer"),
            fetches: fetches.join().expect("fetch pacer"),
        }
    })
}

/// Renewals alone at the plan's rate for its duration; `renewed` counts them across runs.
pub(crate) fn renewals(
    runtime: &Handle,
    client: &reqwest::Client,
    url: &str,
    plan: Plan,
    renewed: &AtomicU64,
) -> Outcome {
    open_loop(runtime, plan.renewals, plan.duration, |_| {
        // A prime stride visits every instance once per `instances` renewals.
        let n = renewed.fetch_add(1, Ordering::Relaxed);
        succeeds(client.put(format!("{url}{}", renewal(n * 7919 % plan.instances))))
    })
}

/// What a Eureka client asks for: the whole registry as JSON, gzip accepted (reqwest with its
/// `gzip` feature, as feign-eureka uses it, and Spring's Apache HttpClient both send it).
fn full_fetch(client: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    client
        .get(format!("{url}apps/"))
        .header("Accept", "application/json")
        .header("Accept-Encoding", "gzip")
}

/// Sends the request and reads the whole answer; `true` for a 2xx.
async fn succeeds(request: reqwest::RequestBuilder) -> bool {
    match request.send().await {
        Ok(response) if response.status().is_success() => response.bytes().await.is_ok(),
        _ => false,
    }
}

/// Starts `call(n)` `rate` times a second for `duration` on `runtime` and waits for every call.
///
/// The pacing runs on the calling thread with `thread::sleep`, finer than tokio's millisecond
/// timer, and a call's latency runs from when it was due, so neither the timer's rounding nor a
/// slow server's queueing is hidden (or added) by the generator.
fn open_loop<F, Fut>(runtime: &Handle, rate: u32, duration: Duration, call: F) -> Outcome
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = bool> + Send + 'static,
{
    let period = Duration::from_secs(1) / rate.max(1);
    let total = (duration.as_secs_f64() * f64::from(rate.max(1))).round() as u32;
    let started = Instant::now();
    let mut calls = Vec::with_capacity(total as usize);
    for n in 0..total {
        let due = started + period * n;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
        let call = call(u64::from(n));
        calls.push(runtime.spawn(async move { (call.await, micros(due.elapsed())) }));
    }
    runtime.block_on(async {
        let mut samples = Vec::with_capacity(calls.len());
        let mut errors = 0;
        for call in calls {
            match call.await {
                Ok((true, us)) => samples.push(us),
                _ => errors += 1,
            }
        }
        Outcome {
            latencies: Latencies::new(samples),
            errors,
        }
    })
}

/// A registration body as a Spring Cloud client sends it.
fn registration(i: u64) -> String {
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

/// The renewal path of instance `i`, relative to the service URL.
fn renewal(i: u64) -> String {
    let port = 10_000 + (i % 50_000);
    let vip = format!("svc-{}", i % 100);
    format!(
        "apps/SVC-{}/10.0.{}.{}:{vip}:{port}?status=UP&lastDirtyTimestamp=1732881099990",
        i % 100,
        i / 250,
        i % 250
    )
}
