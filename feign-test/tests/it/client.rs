//! What the generated client sends, as the server recorded it, and the scripted answers it
//! gets.

use std::time::Duration;

use feign_core::Retryer;
use feign_test::{Matcher, RecordingServer, Reply};
use serde_json::json;

use crate::{client, order, Order, Orders};

const READ: Duration = Duration::from_secs(2);

#[tokio::test]
async fn records_the_method_path_query_headers_and_body_a_client_sends() {
    let server = RecordingServer::start().await;
    server
        .on(Matcher::post("/orders"))
        .respond(Reply::status(201).json(&order()));
    let orders = client(&server.url(), READ, Retryer::never());

    assert_eq!(orders.create(&order(), "acme").await.unwrap(), order());

    let sent = server.assert_received(
        &Matcher::post("/orders")
            .header("x-tenant", "acme")
            .header("content-type", "application/json")
            .json_body(json!({ "id": 42, "item": "book" })),
    );
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.target, "/orders");
    assert_eq!(sent.query, None);
    assert_eq!(sent.header("accept"), Some("application/json"));
    assert_eq!(sent.json::<Order>().unwrap(), order());
    assert_eq!(sent.text().unwrap(), r#"{"id":42,"item":"book"}"#);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn decodes_the_query_and_matches_scripts_on_it() {
    let server = RecordingServer::start().await;
    server
        .on(Matcher::get("/orders/42").query("expand", "items & more"))
        .respond(Reply::ok().json(&order()));
    let orders = client(&server.url(), READ, Retryer::never());

    orders.get(42, Some("items & more")).await.unwrap();
    let without = orders.get(42, None).await.unwrap_err();

    let [with, bare] = <[_; 2]>::try_from(server.requests()).unwrap();
    assert_eq!(with.target, "/orders/42?expand=items%20%26%20more");
    assert_eq!(
        with.query_pairs(),
        [("expand".to_owned(), "items & more".to_owned())]
    );
    assert_eq!(bare.query, None);
    assert_eq!(without.status().map(|s| s.as_u16()), Some(404));
}

#[tokio::test]
async fn an_unmatched_request_gets_a_404_naming_it() {
    let server = RecordingServer::start().await;
    server.on(Matcher::get("/orders/1")).respond(Reply::ok());
    let orders = client(&server.url(), READ, Retryer::never());

    let error = orders.get(7, Some("all")).await.unwrap_err();

    assert_eq!(error.status().map(|s| s.as_u16()), Some(404));
    let body = String::from_utf8_lossy(error.body().unwrap()).into_owned();
    assert_eq!(
        body,
        "feign-test: no reply scripted for GET /orders/7?expand=all"
    );
}

#[tokio::test]
async fn the_default_answer_can_be_changed() {
    let server = RecordingServer::start().await;
    server.otherwise(Reply::ok().text("anything"));
    let orders = client(&server.url(), READ, Retryer::never());

    assert_eq!(orders.text("x").await.unwrap(), "anything");
}

#[tokio::test]
async fn replies_in_order_let_the_retryer_see_a_503_then_a_200() {
    let server = RecordingServer::start().await;
    server.on(Matcher::get("/text/flaky")).respond_in_order([
        Reply::status(503),
        Reply::status(503),
        Reply::ok().text("up"),
    ]);
    server.expect(Matcher::get("/text/flaky")).times(3);

    let retrying = client(&server.url(), READ, crate::quick_retries());
    assert_eq!(retrying.text("flaky").await.unwrap(), "up");
    server.verify();

    // The last reply repeats once the others are used up.
    let once = client(&server.url(), READ, Retryer::never());
    assert_eq!(once.text("flaky").await.unwrap(), "up");
    assert_eq!(server.request_count(), 4);
}

#[tokio::test]
async fn a_later_script_replaces_an_earlier_one() {
    let server = RecordingServer::start().await;
    let orders = client(&server.url(), READ, Retryer::never());
    server
        .on(Matcher::get("/text/state"))
        .respond(Reply::ok().text("before"));
    assert_eq!(orders.text("state").await.unwrap(), "before");

    server
        .on(Matcher::get("/text/state"))
        .respond(Reply::ok().text("after"));
    assert_eq!(orders.text("state").await.unwrap(), "after");
}

#[tokio::test]
async fn respond_with_answers_from_the_request() {
    let server = RecordingServer::start().await;
    server
        .on(Matcher::get("/text/echo").header_present("accept"))
        .respond_with(|request| {
            Reply::ok().text(format!(
                "you accept {}",
                request.header("accept").unwrap_or("")
            ))
        });
    let orders = client(&server.url(), READ, Retryer::never());

    assert_eq!(
        orders.text("echo").await.unwrap(),
        "you accept application/json"
    );
}

#[tokio::test]
async fn respond_with_async_can_wait_for_the_test() {
    let server = RecordingServer::start().await;
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    let opened = gate.clone();
    server
        .on(Matcher::get("/text/gated"))
        .respond_with_async(move |_| {
            let opened = opened.clone();
            async move {
                opened.notified().await;
                Reply::ok().text("opened")
            }
        });
    let orders = client(&server.url(), READ, Retryer::never());

    let call = tokio::spawn(async move { orders.text("gated").await });
    while server.request_count() == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!call.is_finished(), "answered before the gate opened");
    gate.notify_one();
    assert_eq!(call.await.unwrap().unwrap(), "opened");
}

#[tokio::test]
async fn reset_forgets_scripts_and_requests() {
    let server = RecordingServer::start().await;
    server
        .on(Matcher::any())
        .respond(Reply::ok().text("scripted"));
    let orders = client(&server.url(), READ, Retryer::never());
    orders.text("a").await.unwrap();

    server.reset();

    assert_eq!(server.request_count(), 0);
    assert_eq!(
        orders
            .text("a")
            .await
            .unwrap_err()
            .status()
            .map(|s| s.as_u16()),
        Some(404)
    );
}
