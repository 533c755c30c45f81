//! Active health checks against loopback backends: a failing instance is checked out, and when
//! every instance fails its check the supplier serves them all rather than an empty list; the
//! thresholds keep one lost check from flipping an instance; checks go with the calls' TLS and
//! proxy settings; refetching checks a new instance at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use feign_core::resolve::{ChooseRequest, Resolver};
use feign_core::transport::{HttpClientConfig, Proxy, Tls};
use feign_core::Options;
use feign_lb::StaticSupplier;
use feign_lb::{HealthCheckOptions, HealthCheckSupplier, InstanceSupplier, LoadBalancer};
use feign_test_support::backend::{Backend, Mode};
use feign_test_support::proxy::ForwardProxy;
use feign_test_support::tls::{Pki, TlsServer};
use http::{HeaderMap, Method, StatusCode};

const SERVICE: &str = "order-service";

fn ports(supplier: &HealthCheckSupplier) -> Vec<u16> {
    let list = supplier.instances(SERVICE).expect("the service is known");
    let mut ports: Vec<u16> = list.iter().map(|instance| instance.port()).collect();
    ports.sort_unstable();
    ports
}

fn health_hits(backend: &Backend) -> usize {
    backend
        .log()
        .iter()
        .filter(|(_, path)| path == "/health")
        .count()
}

/// Polls `supplier` until `done` holds, asserting on every read that the list is never empty.
async fn served_until(
    supplier: &HealthCheckSupplier,
    done: impl Fn(&[u16]) -> bool,
    what: &str,
) -> Vec<u16> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let served = ports(supplier);
        assert!(!served.is_empty(), "an empty list was served while {what}");
        if done(&served) {
            return served;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: still serving {served:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn every_instance_failing_its_check_serves_all_rather_than_none() {
    let backends: Vec<Backend> = (0..3).map(|_| Backend::start()).collect();
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let mut all: Vec<u16> = backends.iter().map(|b| b.addr.port()).collect();
    all.sort_unstable();
    // Panic only when every check fails, so a partial failure shows in what is served.
    let options = HealthCheckOptions::new()
        .path("/health")
        .interval(Duration::from_millis(20))
        .timeout(Duration::from_millis(500))
        .panic_threshold(1.0);
    let supplier =
        HealthCheckSupplier::with_options(Arc::new(StaticSupplier::new(SERVICE, &urls)), options);
    assert_eq!(
        ports(&supplier),
        all,
        "healthy until a check says otherwise"
    );

    // One instance recovers first: the checks run, and only it is served.
    for backend in &backends[1..] {
        backend.set_mode(Mode::Unavailable);
    }
    let first = backends[0].addr.port();
    served_until(&supplier, |s| s == [first], "two instances fail").await;

    // Now all fail: several full rounds of checks, and every read in between serves all three.
    backends[0].set_mode(Mode::Unavailable);
    served_until(&supplier, |s| s == all, "every instance fails").await;
    let rounds_before = backends.iter().map(health_hits).min().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while backends.iter().map(health_hits).min().unwrap() < rounds_before + 5 {
        assert_eq!(ports(&supplier), all, "every instance fails");
        assert!(Instant::now() < deadline, "the checks stopped running");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    // The balancer over it still has somewhere to send a call.
    let lb = LoadBalancer::builder().supplier(supplier.clone()).build();
    let headers = HeaderMap::new();
    let request = ChooseRequest::new(SERVICE, "Orders#get", &Method::GET, &headers);
    let chosen = lb
        .choose(&request)
        .expect("an instance while every check fails");
    assert!(
        urls.iter()
            .any(|url| chosen.base_url().starts_with(url.as_str())),
        "{}",
        chosen.base_url()
    );

    // And a recovery is seen again.
    backends[2].set_mode(Mode::Ok);
    let last = backends[2].addr.port();
    served_until(&supplier, |s| s == [last], "one instance recovers").await;
}

/// A server whose `/health` answers the statuses of `script` in turn, then 200, counting the
/// checks.
async fn scripted(script: &'static [u16]) -> (String, Arc<AtomicUsize>) {
    let checks = Arc::new(AtomicUsize::new(0));
    let counter = checks.clone();
    let app = Router::new().route(
        "/health",
        get(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let status = script.get(n).copied().unwrap_or(200);
            async move { StatusCode::from_u16(status).unwrap() }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, checks)
}

/// One failed check does not take an instance out, nor does one passed check bring it back:
/// two in a row do (Envoy's thresholds, both 2 by default).
#[tokio::test]
async fn one_failed_check_does_not_flip_an_instance_two_in_a_row_do() {
    //  check:             1    2    3    4    5    6    7    8    9
    static SCRIPT: [u16; 9] = [200, 503, 200, 503, 503, 200, 503, 200, 200];
    let (flaky, checks) = scripted(&SCRIPT).await;
    let steady = Backend::start();
    let options = HealthCheckOptions::new()
        .path("/health")
        .interval(Duration::from_millis(30));
    let source = StaticSupplier::new(SERVICE, [flaky.clone(), steady.url()]);
    let supplier = HealthCheckSupplier::with_options(Arc::new(source), options);
    // Each change of what is served, with the checks made by then.
    let mut changes: Vec<(usize, usize)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while checks.load(Ordering::SeqCst) < 12 {
        assert!(Instant::now() < deadline, "the checks stopped: {changes:?}");
        let served = supplier.instances(SERVICE).expect("known").len();
        if changes.last().is_none_or(|&(_, n)| n != served) {
            changes.push((checks.load(Ordering::SeqCst), served));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let served: Vec<usize> = changes.iter().map(|&(_, n)| n).collect();
    assert_eq!(served, [2, 1, 2], "{changes:?}");
    assert!(
        changes[1].0 >= 5,
        "taken out before its second failure in a row: {changes:?}"
    );
    assert!(
        changes[2].0 >= 9,
        "back before its second pass in a row: {changes:?}"
    );
}

/// Instances behind a CA made in the test and requiring a client certificate are checked with
/// the calls' TLS settings: the failing one is taken out. With a bare client every check failed
/// its handshake, so panic mode served both and the checks did nothing.
#[tokio::test]
async fn checks_use_the_calls_tls_settings() {
    let pki = Pki::new();
    let health =
        |status: StatusCode| Router::new().route("/health", get(move || async move { status }));
    let good = TlsServer::mutual(health(StatusCode::OK), &pki).await;
    let bad = TlsServer::mutual(health(StatusCode::SERVICE_UNAVAILABLE), &pki).await;
    let tls = Tls::new()
        .ca_pem(pki.ca.clone())
        .identity_pem(pki.client.cert.clone(), pki.client.key.clone());
    let options = HealthCheckOptions::new()
        .path("/health")
        .interval(Duration::from_millis(20))
        .transport(HttpClientConfig::new().tls(tls), &Options::new());
    let source = StaticSupplier::new(SERVICE, [good.url(), bad.url()]);
    let supplier = HealthCheckSupplier::with_options(Arc::new(source), options);
    let good_port = good.addr.port();
    served_until(
        &supplier,
        |s| s == [good_port],
        "the failing instance is checked",
    )
    .await;
    assert!(good.handshakes() > 0 && bad.handshakes() > 0);
    assert_eq!(good.refused() + bad.refused(), 0, "a handshake failed");
}

/// Checks go through the calls' proxy.
#[tokio::test]
async fn checks_use_the_calls_proxy() {
    let proxy = ForwardProxy::start(None).await;
    let backend = Backend::start();
    let options = HealthCheckOptions::new()
        .path("/health")
        .interval(Duration::from_millis(20))
        .transport(
            HttpClientConfig::new().proxy(Proxy::http(proxy.url())),
            &Options::new(),
        );
    let source = StaticSupplier::new(SERVICE, [backend.url()]);
    let supplier = HealthCheckSupplier::with_options(Arc::new(source), options);
    let _ = supplier.instances(SERVICE);
    let deadline = Instant::now() + Duration::from_secs(10);
    let target = format!("{}/health", backend.url());
    while !proxy.seen().iter().any(|r| r.target == target) {
        assert!(
            Instant::now() < deadline,
            "no check went through the proxy: {:?}",
            proxy.seen()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// With refetch on, an instance the source adds is checked at once: a failing one is out
/// within moments, not at the next 25 s round.
#[tokio::test]
async fn with_refetch_a_new_instance_is_checked_at_once() {
    let backends: Vec<Backend> = (0..3).map(|_| Backend::start()).collect();
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    backends[2].set_mode(Mode::Unavailable);
    let source = StaticSupplier::new(SERVICE, &urls[..2]);
    let options = HealthCheckOptions::new()
        .path("/health")
        .refetch_instances(Duration::from_secs(25));
    let supplier = HealthCheckSupplier::with_options(Arc::new(source.clone()), options);
    let mut first_two: Vec<u16> = backends[..2].iter().map(|b| b.addr.port()).collect();
    first_two.sort_unstable();
    served_until(&supplier, |s| s == first_two, "the first round").await;
    while backends.iter().take(2).any(|b| health_hits(b) == 0) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let started = Instant::now();
    source.set(
        SERVICE,
        backends
            .iter()
            .map(|b| feign_lb::ServiceInstance::new(SERVICE, "127.0.0.1", b.addr.port()))
            .collect(),
    );
    served_until(&supplier, |s| s == first_two, "the new, failing instance").await;
    assert_eq!(health_hits(&backends[2]), 1, "checked once, alone deciding");
    assert!(started.elapsed() < Duration::from_secs(5));
}
