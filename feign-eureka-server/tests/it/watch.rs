//! Push discovery: `GET /eureka/watch`, the long poll that answers as soon as the registry
//! changes, on its own and under feign-eureka's client.

use std::time::{Duration, Instant};

use feign_eureka::{EurekaClient, EurekaClientBuilder};
use feign_eureka_server::{EurekaServer, EurekaServerBuilder};

use crate::support::{call, dev, http, instance, large_instance, register, unlimited};

const LDT: u64 = 1_700_000_000_000;
/// The bound the tests assert; the freshness benchmark measures the real figure.
const PROMPT: Duration = Duration::from_secs(1);

/// A registry as it runs in production: the read-only cache on, refreshed every 30 s, so only
/// the watch can explain a change seen sooner.
fn production() -> EurekaServerBuilder {
    EurekaServer::builder()
        .bind("127.0.0.1:0")
        .self_preservation(false)
}

/// A discovery-only client that watches and would poll only every minute.
fn watching(url: &str) -> EurekaClientBuilder {
    EurekaClient::builder()
        .service_urls([url])
        .registry_fetch_interval(Duration::from_secs(60))
        .watch(true)
}

/// How long until `check` holds (polled every millisecond), or `None` after 5 s.
async fn time_until(mut check: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if check() {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    None
}

fn routable(client: &EurekaClient, app: &str) -> usize {
    client.instances(app).map_or(0, |i| i.len())
}

/// `GET watch` with `query`: status, version header and body.
async fn watch(base: &str, query: &str) -> (u16, Option<String>, String) {
    let response = http()
        .get(format!("{base}watch?{query}"))
        .header("Accept", "application/json")
        .send()
        .await
        .expect("watch");
    let status = response.status().as_u16();
    let version = response
        .headers()
        .get("x-feign-registry-version")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, version, response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_and_a_deregistration_reach_a_watching_client_at_once() {
    let server = production().start().await.unwrap();
    let base = server.url().to_owned();
    assert_eq!(
        register(&base, "ORDERS", &instance("ORDERS", "o-1", 8081, "UP", LDT)).await,
        204
    );
    let client = watching(&base).start().await.expect("client starts");
    assert_eq!(
        routable(&client, "ORDERS"),
        1,
        "the first fetch is a full one"
    );
    // Let the first watch (answered at once with the queue) settle into waiting.
    tokio::time::sleep(Duration::from_millis(200)).await;

    let body = instance("ORDERS", "o-2", 8082, "UP", LDT);
    let started = Instant::now();
    assert_eq!(register(&base, "ORDERS", &body).await, 204);
    let seen = time_until(|| routable(&client, "ORDERS") == 2)
        .await
        .expect("the registration reaches the client");
    let added = started.elapsed();

    let started = Instant::now();
    let (status, _) = call(reqwest::Method::DELETE, &base, "apps/ORDERS/o-1").await;
    assert_eq!(status, 200);
    time_until(|| routable(&client, "ORDERS") == 1)
        .await
        .expect("the deregistration reaches the client");
    let removed = started.elapsed();
    println!("push: registration seen after {added:?} ({seen:?} after the answer), deregistration after {removed:?}");
    assert!(added < PROMPT, "registration took {added:?}");
    assert!(removed < PROMPT, "deregistration took {removed:?}");
    assert_eq!(client.registry_hash_code(), "UP_1_");
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_replicated_from_a_peer_reaches_a_watcher_of_the_other_node() {
    // `first` takes batches only from its configured peers, so it names `second`'s address
    // before `second` exists.
    let second_port = feign_test_support::free_port();
    let first = dev()
        .startup_sync(false)
        .peer(format!("http://127.0.0.1:{second_port}/eureka/"))
        .start()
        .await
        .unwrap();
    let second = dev()
        .bind(format!("127.0.0.1:{second_port}"))
        .startup_sync(false)
        .replication_delay(Duration::from_millis(10))
        .peer(first.url())
        .start()
        .await
        .unwrap();
    let client = watching(first.url()).start().await.expect("client starts");
    tokio::time::sleep(Duration::from_millis(200)).await;

    let started = Instant::now();
    let body = instance("BILLING", "b-1", 9091, "UP", LDT);
    assert_eq!(register(second.url(), "BILLING", &body).await, 204);
    time_until(|| routable(&client, "BILLING") == 1)
        .await
        .expect("the replicated registration reaches the watcher of the other node");
    let took = started.elapsed();
    println!("push: replicated registration seen after {took:?}");
    assert!(took < 2 * PROMPT, "took {took:?}");
    client.shutdown().await;
    second.shutdown().await;
    first.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_without_a_change_ends_with_its_timeout_and_keeps_its_version() {
    let server = production().start().await.unwrap();
    let base = server.url();
    // No version: the delta at once, with this server's version.
    let (status, version, body) = watch(base, "").await;
    assert_eq!(status, 200);
    let version = version.expect("a version");
    assert!(body.contains("apps__hashcode"), "{body}");

    let started = Instant::now();
    let (status, again, body) = watch(base, &format!("after={version}&timeout=300")).await;
    let waited = started.elapsed();
    assert_eq!(
        (status, again.as_deref(), body.as_str()),
        (204, Some(version.as_str()), "")
    );
    assert!(
        waited >= Duration::from_millis(290),
        "answered after {waited:?}"
    );
    assert!(waited < Duration::from_secs(3), "answered after {waited:?}");

    // Another server's version (or one from before a restart) is answered at once.
    let started = Instant::now();
    let (status, _, _) = watch(base, "after=1-0&timeout=5000").await;
    assert_eq!(status, 200);
    assert!(started.elapsed() < Duration::from_secs(2));
    // Bad input is refused with a reason.
    for bad in ["after=nope", "after=1-x", "timeout=soon", "timeout=-1"] {
        let (status, _, reason) = watch(base, bad).await;
        assert_eq!(status, 400, "{bad}: {reason}");
        assert!(!reason.is_empty());
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_beyond_the_cap_are_refused_and_shutdown_ends_the_waiting_ones() {
    let server = production().max_watchers(2).start().await.unwrap();
    let base = server.url().to_owned();
    let (_, version, _) = watch(&base, "").await;
    let query = format!("after={}&timeout=20000", version.unwrap());
    let waiting: Vec<_> = (0..2)
        .map(|_| {
            let (base, query) = (base.clone(), query.clone());
            tokio::spawn(async move { watch(&base, &query).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, _, reason) = watch(&base, &query).await;
    assert_eq!(status, 429, "{reason}");
    // A change answers both waiting watches at once, which frees their places.
    assert_eq!(
        register(&base, "ORDERS", &instance("ORDERS", "o-1", 8081, "UP", LDT)).await,
        204
    );
    for watch in waiting {
        let (status, _, body) = tokio::time::timeout(PROMPT, watch)
            .await
            .expect("answered at once")
            .unwrap();
        assert_eq!(status, 200);
        assert!(body.contains("o-1"), "{body}");
    }
    let (_, version, _) = watch(&base, "").await;
    let query = format!("after={}&timeout=20000", version.unwrap());
    let waiting = tokio::spawn({
        let base = base.clone();
        async move { watch(&base, &query).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    server.shutdown().await;
    let (status, _, _) = waiting.await.unwrap();
    assert_eq!(status, 503, "a waiting watch ends with the server");
    assert!(started.elapsed() < Duration::from_secs(3));
}

/// A registry behind basic auth asks for the credentials on the watch as on every request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_needs_the_credentials_every_request_needs() {
    let server = production()
        .credentials("eureka", "s3cret")
        .start()
        .await
        .unwrap();
    let (status, version, _) = watch(server.url(), "").await;
    assert_eq!((status, version), (401, None));
    let authorized = server.url().replacen("http://", "http://eureka:s3cret@", 1);
    let (status, version, _) = watch(&authorized, "").await;
    assert_eq!(status, 200);
    assert!(version.is_some());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_watch_the_registry_answers_as_eureka_and_the_client_polls() {
    let server = dev().max_watchers(0).start().await.unwrap();
    let base = server.url().to_owned();
    let (status, _, _) = watch(&base, "").await;
    assert_eq!(status, 404);
    let offer = http()
        .get(format!("{base}apps/"))
        .header("Accept", "application/json")
        .send()
        .await
        .unwrap();
    assert!(offer.headers().get("x-feign-watch").is_none());

    let client = watching(&base)
        .registry_fetch_interval(Duration::from_millis(200))
        .start()
        .await
        .unwrap();
    assert_eq!(
        register(&base, "ORDERS", &instance("ORDERS", "o-1", 8081, "UP", LDT)).await,
        204
    );
    time_until(|| routable(&client, "ORDERS") == 1)
        .await
        .expect("polling finds the registration");
    client.shutdown().await;
    server.shutdown().await;
}

/// Forty gzip watches in a loop while four clients update the metadata of large instances as
/// fast as they can, 160 updates in all: the changes made while the delta is rendered share the
/// next rendering, which every watch it can answer takes (a woken watch once rendered it again
/// whenever another change had come meanwhile, on a worker, so nearly every change cost a
/// rendering of the whole delta).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renderings_follow_the_changes_not_the_watches() {
    let server = unlimited().metadata_rate_limit(None).start().await.unwrap();
    let base = server.url().to_owned();
    for i in 0..20 {
        let body = large_instance("BIG", &format!("big-{i}"), 15, "x");
        assert_eq!(register(&base, "BIG", &body).await, 204);
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchers: Vec<_> = (0..40)
        .map(|_| {
            let (base, stop) = (base.clone(), stop.clone());
            tokio::spawn(async move {
                // Gzip asked for and taken as it comes, as a watching client takes it; not
                // decompressed here, so the test's own work stays small.
                let client = http();
                let mut after = String::new();
                let mut answers = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let response = client
                        .get(format!("{base}watch?after={after}&timeout=500"))
                        .header("Accept", "application/json")
                        .header("Accept-Encoding", "gzip")
                        .send()
                        .await
                        .unwrap();
                    if let Some(version) = response.headers().get("x-feign-registry-version") {
                        after = version.to_str().unwrap().to_owned();
                    }
                    if response.status() == 200 {
                        answers += 1;
                    }
                    response.bytes().await.unwrap();
                }
                answers
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = server.watch_renders();
    let updaters: Vec<_> = (0..4)
        .map(|updater| {
            let base = base.clone();
            tokio::spawn(async move {
                for round in 0..40 {
                    let id = updater * 5 + round % 5;
                    let path = format!("apps/BIG/big-{id}/metadata?round={round}");
                    assert_eq!(call(reqwest::Method::PUT, &base, &path).await.0, 200);
                }
            })
        })
        .collect();
    for updater in updaters {
        updater.await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answers = 0;
    for watcher in watchers {
        answers += watcher.await.unwrap();
    }
    let renders = server.watch_renders() - before;
    println!("{renders} renderings for 160 changes and {answers} answers to 40 watches");
    assert!(answers >= 40, "{answers} answers");
    // A rendering takes far longer than a change: the changes made while one runs share the
    // next (about 20 renderings here; the previous code rendered about 120).
    assert!(renders <= 80, "{renders} renderings for 160 changes");
    server.shutdown().await;
}
