//! Delays and failures scripted on a server, met by the client's timeouts and retryer.

use std::time::Duration;

use feign_core::Retryer;
use feign_test::{Fault, Matcher, RecordingServer, Reply};

use crate::{client, quick_retries, Orders};

const SHORT: Duration = Duration::from_millis(200);

#[tokio::test]
async fn a_delay_longer_than_the_read_timeout_times_the_call_out() {
    let server = RecordingServer::start().await;
    server
        .on(Matcher::get("/text/slow"))
        .respond(Reply::ok().text("late").delay(Duration::from_secs(2)));
    server
        .on(Matcher::get("/text/quick"))
        .respond(Reply::ok().text("soon").delay(Duration::from_millis(50)));
    let orders = client(&server.url(), SHORT, Retryer::never());

    let started = tokio::time::Instant::now();
    let error = orders.text("slow").await.unwrap_err();
    assert!(error.is_timeout(), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    assert_eq!(orders.text("quick").await.unwrap(), "soon");
}

#[tokio::test]
async fn a_slow_first_answer_is_retried_by_the_retryer() {
    let server = RecordingServer::start().await;
    server.on(Matcher::get("/text/x")).respond_in_order([
        Reply::ok().text("late").delay(Duration::from_secs(2)),
        Reply::ok().text("second"),
    ]);
    let orders = client(&server.url(), SHORT, quick_retries());

    assert_eq!(orders.text("x").await.unwrap(), "second");
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_hang_is_never_answered() {
    let server = RecordingServer::start().await;
    server.on(Matcher::any()).respond(Reply::fault(Fault::Hang));
    let orders = client(&server.url(), SHORT, Retryer::never());

    let error = orders.text("x").await.unwrap_err();

    assert!(error.is_timeout(), "{error}");
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_connection_closed_before_the_answer_fails_the_attempt_and_is_retried() {
    let server = RecordingServer::start().await;
    server.on(Matcher::get("/text/x")).respond_in_order([
        Reply::fault(Fault::CloseBeforeAnswer),
        Reply::ok().text("second"),
    ]);

    let once = client(&server.url(), SHORT, Retryer::never());
    let error = once.text("x").await.unwrap_err();
    assert!(!error.is_status() && !error.is_timeout(), "{error}");

    server.reset();
    server.on(Matcher::get("/text/x")).respond_in_order([
        Reply::fault(Fault::CloseBeforeAnswer),
        Reply::ok().text("second"),
    ]);
    let retrying = client(&server.url(), SHORT, quick_retries());
    assert_eq!(retrying.text("x").await.unwrap(), "second");
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn a_reset_connection_fails_the_call() {
    let server = RecordingServer::start().await;
    server
        .on(Matcher::any())
        .respond(Reply::fault(Fault::Reset));
    let orders = client(&server.url(), Duration::from_secs(2), Retryer::never());

    let started = tokio::time::Instant::now();
    let error = orders.text("x").await.unwrap_err();

    assert!(!error.is_status() && !error.is_timeout(), "{error}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_delayed_fault_comes_after_its_delay() {
    let server = RecordingServer::start().await;
    server
        .on(Matcher::any())
        .respond(Reply::fault(Fault::CloseBeforeAnswer).delay(Duration::from_millis(300)));
    let orders = client(&server.url(), Duration::from_secs(2), Retryer::never());

    let started = tokio::time::Instant::now();
    orders.text("x").await.unwrap_err();

    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_malformed_response_is_an_error_not_a_panic() {
    let server = RecordingServer::start().await;
    server
        .on(Matcher::get("/text/bad"))
        .respond(Reply::raw("HTTP/1.1 abc Nope\r\n\r\n"));
    server.on(Matcher::get("/text/short")).respond(Reply::raw(
        "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc",
    ));
    let orders = client(&server.url(), Duration::from_secs(2), Retryer::never());

    let bad = orders.text("bad").await.unwrap_err();
    assert!(!bad.is_status(), "{bad}");
    let short = orders.text("short").await.unwrap_err();
    assert!(!short.is_status(), "{short}");
}

#[tokio::test]
async fn raw_bytes_are_sent_as_they_are() {
    let server = RecordingServer::start().await;
    server.on(Matcher::any()).respond(Reply::raw(
        "HTTP/1.1 200 OK\r\ncontent-length: 3\r\nconnection: close\r\n\r\nraw",
    ));
    let orders = client(&server.url(), Duration::from_secs(2), Retryer::never());

    assert_eq!(orders.text("x").await.unwrap(), "raw");
}

#[tokio::test]
async fn a_stopped_server_refuses_connections() {
    let mut server = RecordingServer::start().await;
    server.on(Matcher::any()).respond(Reply::ok());
    let orders = client(&server.url(), Duration::from_secs(2), Retryer::never());
    orders.text("x").await.unwrap();

    server.stop().await;

    let error = orders.text("x").await.unwrap_err();
    assert!(error.is_connect(), "{error}");
}
