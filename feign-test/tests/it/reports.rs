//! What the assertions say when they fail, and that it never shows a secret.

use std::time::Duration;

use feign_core::{BearerAuth, Retryer};
use feign_test::{Matcher, RecordingServer, Reply};

use crate::{order, panic_message, Orders, OrdersClient};

const SECRET: &str = "s3cret-token";

/// A client sending `Authorization: Bearer s3cret-token` and a session cookie.
fn authorized(url: &str) -> OrdersClient {
    OrdersClient::builder()
        .url(url)
        .interceptor(BearerAuth::new(SECRET))
        .default_header("Cookie", "session=s3cret-cookie")
        .retryer(Retryer::never())
        .build()
        .expect("the client builds")
}

#[tokio::test]
async fn assert_received_lists_each_request_and_how_it_differs() {
    let server = RecordingServer::start().await;
    server.otherwise(Reply::ok().json(&order()));
    let orders = authorized(&server.url());
    orders.create(&order(), "acme").await.unwrap();

    let message = panic_message(|| {
        server.assert_received(&Matcher::post("/orders").header("x-tenant", "globex"));
    });

    assert!(
        message.starts_with(
            "feign-test: expected a request POST /orders with header x-tenant: globex, received none\n1 request was received:\n  1. POST /orders\n"
        ),
        "{message}"
    );
    assert!(message.contains(r#""x-tenant": "acme""#), "{message}");
    assert!(
        message.contains(r#"body: "{\"id\":42,\"item\":\"book\"}""#),
        "{message}"
    );
    assert!(
        message.contains("differs: no header x-tenant: globex"),
        "{message}"
    );
    assert!(message.contains(r#""authorization": ***"#), "{message}");
    assert!(message.contains(r#""cookie": ***"#), "{message}");
    assert!(
        !message.contains("s3cret"),
        "a secret was printed: {message}"
    );
}

#[tokio::test]
async fn verify_names_each_unmet_expectation() {
    let server = RecordingServer::start().await;
    server.otherwise(Reply::ok().json(&order()));
    server.expect(Matcher::get("/orders/42")).times(2);
    server.expect(Matcher::post("/orders")).never();
    server.expect(Matcher::get("/text/x")).at_least(1);
    let orders = authorized(&server.url());
    orders.get(42, None).await.unwrap();
    orders.create(&order(), "acme").await.unwrap();

    let message = panic_message(|| server.verify());

    assert!(
        message.starts_with(
            "feign-test: expected GET /orders/42 exactly 2 times, received 1\n  \
             expected POST /orders never, received 1\n  \
             expected GET /text/x at least once, received 0\n\
             2 requests were received:\n  1. GET /orders/42\n"
        ),
        "{message}"
    );
    assert!(
        !message.contains("s3cret"),
        "a secret was printed: {message}"
    );
}

#[tokio::test]
async fn verify_passes_when_every_expectation_is_met() {
    let server = RecordingServer::start().await;
    server.otherwise(Reply::ok().json(&order()));
    server.expect(Matcher::get("/orders/42")).times(1);
    server.expect(Matcher::delete("/orders/42")).never();
    let orders = authorized(&server.url());
    orders.get(42, None).await.unwrap();

    server.verify();
}

#[tokio::test]
async fn debug_and_display_of_a_recorded_request_hide_secrets() {
    let server = RecordingServer::start().await;
    server.otherwise(Reply::ok().json(&order()));
    let orders = authorized(&server.url());
    orders.get(42, Some("items")).await.unwrap();
    let client = reqwest::Client::new();
    client
        .get(format!(
            "{}/orders/1?access_token=s3cret-query&page=2",
            server.url()
        ))
        .send()
        .await
        .unwrap();

    let [with_headers, with_query] = <[_; 2]>::try_from(server.requests()).unwrap();
    let debug = format!("{with_headers:?}");
    assert!(debug.contains(r#""authorization": ***"#), "{debug}");
    assert!(debug.contains(r#""cookie": ***"#), "{debug}");
    assert!(!debug.contains("s3cret"), "{debug}");
    assert_eq!(
        with_query.to_string(),
        "GET /orders/1?access_token=***&page=2"
    );
    assert!(!format!("{with_query:?}").contains("s3cret"));
    // The fields keep the real values, for assertions.
    assert_eq!(
        with_headers.header("authorization"),
        Some("Bearer s3cret-token")
    );
    assert_eq!(
        with_query.query_value("access_token").as_deref(),
        Some("s3cret-query")
    );
}

#[tokio::test]
async fn only_fails_with_the_requests_when_there_is_not_exactly_one() {
    let server = RecordingServer::start().await;
    let recording = server.recording();
    let none = panic_message(|| {
        recording.only();
    });
    assert_eq!(
        none,
        "feign-test: expected exactly one request, received 0\nno request was received"
    );
}

#[tokio::test]
async fn an_invalid_reply_is_answered_500_and_reported_by_verify() {
    let server = RecordingServer::start().await;
    server
        .on(Matcher::get("/text/bad-header"))
        .respond(Reply::ok().header("bad name", "x"));
    server
        .on(Matcher::get("/text/bad-status"))
        .respond_with(|_| Reply::status(1000));
    let orders = crate::client(&server.url(), Duration::from_secs(2), Retryer::never());

    let header = orders.text("bad-header").await.unwrap_err();
    let status = orders.text("bad-status").await.unwrap_err();

    assert_eq!(header.status().map(|s| s.as_u16()), Some(500));
    assert_eq!(
        String::from_utf8_lossy(status.body().unwrap()),
        "feign-test: the reply to GET /text/bad-status is invalid: status 1000 is not between 100 and 999"
    );
    let message = panic_message(|| server.verify());
    assert!(
        message.contains(
            r#"a reply for GET /text/bad-header is invalid: header name "bad name" cannot be sent"#
        ),
        "{message}"
    );
    assert!(
        message.contains("the reply to GET /text/bad-status is invalid: status 1000"),
        "{message}"
    );
}
