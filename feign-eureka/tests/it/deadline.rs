//! A registry that answers its head and then trickles one byte at a time, never silent long
//! enough for the read timeout: each request still ends within the connect timeout plus the
//! read timeout, so neither `start` nor a refresh hangs.

use std::time::{Duration, Instant};

use feign_eureka::EurekaClient;
use feign_test_support::RawServer;

const HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{";

#[tokio::test]
async fn a_trickling_registry_fails_start_within_the_request_deadline() {
    let registry = RawServer::trickling(HEAD, Duration::from_millis(100)).await;
    let started = Instant::now();
    let start = EurekaClient::builder()
        .service_urls([format!("{}/eureka/", registry.url())])
        .connect_timeout(Duration::from_millis(500))
        .read_timeout(Duration::from_secs(1))
        .enforce_fetch_at_init(true)
        .start();
    let outcome = tokio::time::timeout(Duration::from_secs(20), start)
        .await
        .expect("start ends");
    let error = outcome.expect_err("no registry was read");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "start took {took:?}: {error}"
    );
    let mut chain = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        chain.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    assert!(chain.contains("timed out"), "the error says why: {chain}");
}

#[tokio::test]
async fn a_refresh_against_a_trickling_registry_ends_within_the_request_deadline() {
    let registry = RawServer::trickling(HEAD, Duration::from_millis(100)).await;
    let start = EurekaClient::builder()
        .service_urls([format!("{}/eureka/", registry.url())])
        .connect_timeout(Duration::from_millis(500))
        .read_timeout(Duration::from_secs(1))
        .registry_fetch_interval(Duration::from_secs(3600))
        .start();
    let eureka = tokio::time::timeout(Duration::from_secs(20), start)
        .await
        .expect("start ends")
        .expect("start does not insist on a first fetch");
    let started = Instant::now();
    let refreshed = tokio::time::timeout(Duration::from_secs(20), eureka.refresh())
        .await
        .expect("the refresh ends");
    assert!(refreshed.is_err(), "nothing whole was read");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    eureka.shutdown().await;
}
