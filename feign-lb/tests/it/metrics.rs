//! Spring Cloud LoadBalancer's request metrics, with Spring's tags, read back from
//! `metrics-util`'s DebuggingRecorder, installed for the test's own thread, after calls to
//! loopback backends.

use std::collections::BTreeMap;
use std::time::Duration;

use feign_lb::{LoadBalancer, RetryConfig, StaticSupplier};
use feign_test_support::{closed_port_url, MetricsCapture, MetricsSnapshot};
use metrics_util::debugging::DebugValue;

use feign_test_support::backend::{client, Backend, Mode};

const SVC: &str = "order-service";

/// The value of series `name` of the instance at `host:port` (and outcome, if given).
fn value_of<'a>(
    series: &'a MetricsSnapshot,
    name: &str,
    port: u16,
    outcome: Option<&str>,
) -> Option<&'a DebugValue> {
    series
        .matching(name, "serviceInstance.port", &port.to_string())
        .into_iter()
        .find(|s| outcome.is_none_or(|o| s.labels.get("outcome").map(String::as_str) == Some(o)))
        .map(|s| &s.value)
}

fn balancer(urls: &[String]) -> LoadBalancer {
    LoadBalancer::builder()
        .supplier(StaticSupplier::new(SVC, urls))
        .retry(RetryConfig::disabled())
        .build()
}

#[tokio::test]
async fn requests_are_counted_per_instance_with_springs_tags() {
    let metrics = MetricsCapture::install();
    let ok = Backend::start();
    let unavailable = Backend::start();
    unavailable.set_mode(Mode::Unavailable);
    let refused = closed_port_url();
    let refused_port: u16 = refused.rsplit(':').next().unwrap().parse().unwrap();

    let orders = client(&balancer(&[ok.url()]), Duration::from_secs(5));
    for id in 0..3 {
        orders.get_order(id).await.unwrap();
    }
    let failing = client(&balancer(&[unavailable.url()]), Duration::from_secs(5));
    failing.get_order(1).await.unwrap_err();
    let unreachable = client(&balancer(&[refused]), Duration::from_secs(5));
    unreachable.get_order(1).await.unwrap_err();
    let nothing = client(
        &LoadBalancer::builder()
            .supplier(StaticSupplier::empty())
            .build(),
        Duration::from_secs(5),
    );
    nothing.get_order(1).await.unwrap_err();

    let series = metrics.snapshot();
    let success = "loadbalancer.requests.success";
    assert_eq!(
        value_of(&series, success, ok.addr.port(), Some("SUCCESS")),
        Some(&DebugValue::Counter(3))
    );
    assert_eq!(
        value_of(
            &series,
            success,
            unavailable.addr.port(),
            Some("SERVER_ERROR")
        ),
        Some(&DebugValue::Counter(1)),
        "a 503 is a success of the balancer, as in Spring"
    );
    assert_eq!(
        value_of(&series, "loadbalancer.requests.failed", refused_port, None),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        value_of(
            &series,
            "loadbalancer.requests.active",
            ok.addr.port(),
            None
        ),
        Some(&DebugValue::Gauge(0.0.into()))
    );
    let tags = &series
        .matching(success, "serviceInstance.port", &ok.addr.port().to_string())
        .into_iter()
        .find(|s| s.labels.get("outcome").map(String::as_str) == Some("SUCCESS"))
        .unwrap()
        .labels;
    let host = ok.addr.ip().to_string();
    let instance_id = ok.addr.to_string();
    let port = ok.addr.port().to_string();
    let expected: BTreeMap<String, String> = [
        ("serviceId", SVC),
        ("serviceInstance.instanceId", instance_id.as_str()),
        ("serviceInstance.host", host.as_str()),
        ("serviceInstance.port", port.as_str()),
        ("serviceInstance.secure", "false"),
        ("outcome", "SUCCESS"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(tags, &expected);
    let discard = series
        .matching("loadbalancer.requests.discard", "serviceId", SVC)
        .first()
        .map(|s| (s.labels.len(), &s.value));
    assert_eq!(discard, Some((1, &DebugValue::Counter(1))));
}

#[tokio::test]
async fn the_active_gauge_counts_attempts_in_flight() {
    let metrics = MetricsCapture::install();
    let slow = Backend::start_with_delay(Duration::from_millis(300));
    slow.set_mode(Mode::Slow);
    let orders = client(&balancer(&[slow.url()]), Duration::from_secs(5));
    let call = tokio::spawn({
        let orders = orders.clone();
        async move { orders.get_order(1).await }
    });
    while slow.hits() == 0 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let series = metrics.snapshot();
    assert_eq!(
        value_of(
            &series,
            "loadbalancer.requests.active",
            slow.addr.port(),
            None
        ),
        Some(&DebugValue::Gauge(1.0.into()))
    );
    call.await.unwrap().unwrap();
}

#[tokio::test]
async fn counters_tell_5xx_responses_apart_from_healthy_ones() {
    let backend = Backend::start();
    backend.set_mode(Mode::Unavailable);
    let lb = balancer(&[backend.url()]);
    let orders = client(&lb, Duration::from_secs(5));
    for id in 0..3 {
        let err = orders.get_order(id).await.unwrap_err();
        assert_eq!(err.status().map(|s| s.as_u16()), Some(503), "{err}");
    }
    backend.set_mode(Mode::Ok);
    orders.get_order(4).await.unwrap();

    let counters = lb.counters(SVC).unwrap();
    assert_eq!(
        (
            counters.success,
            counters.server_errors,
            counters.client_errors,
            counters.failed
        ),
        (4, 3, 0, 0),
        "Spring counts a 503 as a success; server_errors says what it was"
    );
    let named = counters.named();
    assert!(named.contains(&("loadbalancer.requests.success{outcome=SERVER_ERROR}", 3)));
    assert!(named.contains(&("loadbalancer.requests.success{outcome=CLIENT_ERROR}", 0)));
}
