//! The registry staleness gauge, read back from a [`MetricsCapture`] while a Eureka-speaking
//! server on 127.0.0.1 answers and then drops connections (paused time).

use std::time::Duration;

use feign_eureka::EurekaClient;
use feign_test_support::eureka::{instance, FakeEureka, Mode};
use feign_test_support::MetricsCapture;
use tokio::time::sleep;

const STALENESS: &str = "eureka.client.registry.staleness";

/// The gauge's value, from a fresh snapshot.
fn staleness_gauge(metrics: &MetricsCapture) -> Option<f64> {
    metrics.snapshot().get(STALENESS, &[])
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn staleness_is_published_after_fetches_and_on_demand() {
    // This thread's recorder, not the global one: other tests of the binary run clients too,
    // and this current-thread runtime runs the client's tasks on this thread.
    let metrics = MetricsCapture::install();

    let server = FakeEureka::start().await;
    server.put(instance("orders", 1));
    let eureka = EurekaClient::builder()
        .service_urls([server.url()])
        .registry_fetch_interval(Duration::from_secs(30))
        .start()
        .await
        .unwrap();
    assert_eq!(
        staleness_gauge(&metrics),
        Some(0.0),
        "fresh after the first fetch"
    );

    server.set_mode(Mode::DropConnections);
    sleep(Duration::from_secs(300)).await;
    let after_failed_fetches = staleness_gauge(&metrics).expect("set by failed fetches");
    assert!(
        (30.0..=300.0).contains(&after_failed_fetches),
        "{after_failed_fetches}"
    );

    let read = eureka.staleness().unwrap();
    assert!(read >= Duration::from_secs(300), "{read:?}");
    assert_eq!(staleness_gauge(&metrics), Some(read.as_secs_f64()));

    server.set_mode(Mode::Normal);
    eureka.refresh().await.unwrap();
    assert_eq!(staleness_gauge(&metrics), Some(0.0), "fresh again");
}
