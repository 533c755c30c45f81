//! Spring Cloud LoadBalancer's request metrics, with Spring's tags, read back from
//! `metrics-util`'s DebuggingRecorder after calls to loopback backends. Tests run one at a
//! time: a snapshot drains every series.

mod support;

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use feign_lb::{LoadBalancer, RetryConfig, StaticSupplier};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use support::{client, refused_url, Backend, Mode};

const SVC: &str = "order-service";

static EXCLUSIVE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn snapshotter() -> &'static Snapshotter {
    static SNAPSHOTTER: OnceLock<Snapshotter> = OnceLock::new();
    SNAPSHOTTER.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder
            .install()
            .expect("no other recorder in this binary");
        snapshotter
    })
}

type Series = Vec<(String, BTreeMap<String, String>, DebugValue)>;

fn snapshot() -> Series {
    snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let labels = key
                .key()
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            (key.key().name().to_owned(), labels, value)
        })
        .collect()
}

/// The value of series `name` of the instance at `host:port` (and outcome, if given).
fn value_of<'a>(
    series: &'a Series,
    name: &str,
    port: u16,
    outcome: Option<&str>,
) -> Option<&'a DebugValue> {
    series
        .iter()
        .find(|(n, labels, _)| {
            n == name
                && labels.get("serviceInstance.port") == Some(&port.to_string())
                && outcome.is_none_or(|o| labels.get("outcome").map(String::as_str) == Some(o))
        })
        .map(|(_, _, value)| value)
}

fn balancer(urls: &[String]) -> LoadBalancer {
    LoadBalancer::builder()
        .supplier(StaticSupplier::new(SVC, urls))
        .retry(RetryConfig::disabled())
        .build()
}

#[tokio::test]
async fn requests_are_counted_per_instance_with_springs_tags() {
    let _exclusive = EXCLUSIVE.lock().await;
    snapshotter();
    let ok = Backend::start();
    let unavailable = Backend::start();
    unavailable.set_mode(Mode::Unavailable);
    let refused = refused_url();
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

    let series = snapshot();
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
    let (_, tags, _) = series
        .iter()
        .find(|(n, labels, _)| {
            n == success
                && labels.get("serviceInstance.port") == Some(&ok.addr.port().to_string())
                && labels.get("outcome").map(String::as_str) == Some("SUCCESS")
        })
        .unwrap();
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
        .iter()
        .find(|(n, labels, _)| {
            n == "loadbalancer.requests.discard"
                && labels.get("serviceId").map(String::as_str) == Some(SVC)
        })
        .map(|(_, labels, value)| (labels.len(), value));
    assert_eq!(discard, Some((1, &DebugValue::Counter(1))));
}

#[tokio::test]
async fn the_active_gauge_counts_attempts_in_flight() {
    let _exclusive = EXCLUSIVE.lock().await;
    snapshotter();
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
    let series = snapshot();
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
