//! Cases A1–A10 of the reliability test list: templates and encoding, against a real server
//! that records what it receives.

use std::collections::HashMap;

use axum::extract::{Path, RawQuery};
use axum::routing::{any, get};
use axum::Router;
use feign_core::__private::{HttpMethod, MethodMeta, MethodOptions, PathPart, Unit};
use feign_core::interceptor::interceptor_fn;
use feign_core::{BearerAuth, LogLevel, RequestTemplate, Retryer};
use feign_test_support::{Captured, OrderClient, Server};

fn echo() -> Router {
    Router::new()
        .route(
            "/api/orders/{id}",
            get(|Path(id): Path<String>| async move { id }),
        )
        .route(
            "/api/orders/{id}/items/{item}",
            get(|Path((id, item)): Path<(String, String)>| async move { format!("{id}|{item}") }),
        )
        .route(
            "/api/orders",
            get(|RawQuery(q): RawQuery| async move { q.unwrap_or_default() }),
        )
        .fallback(any(|| async { "" }))
}

async fn setup() -> (Server, OrderClient) {
    let server = Server::start(echo()).await;
    let client = OrderClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .build()
        .unwrap();
    (server, client)
}

/// A1: header values with CR, LF, NUL, DEL or non-ASCII are rejected, not stripped; nothing is sent.
#[tokio::test]
async fn a1_header_injection_is_rejected_before_sending() {
    let (server, client) = setup().await;
    for bad in [
        "ok\r\nX-Injected: 1",
        "a\nb",
        "a\rb",
        "a\0b",
        "\x7f",
        "\u{010D}\u{010A}",
    ] {
        let err = client.header("X-Trace", bad).await.unwrap_err();
        assert!(err.is_request(), "{bad:?}: {err:?}");
        assert!(err.to_string().contains("x-trace"), "{err}");
        assert!(
            !err.to_string().contains("Injected"),
            "the value is not echoed: {err}"
        );
    }
    assert_eq!(server.connection_count(), 0);
    client
        .header("X-Trace", "fine value\twith tab")
        .await
        .unwrap();
    assert_eq!(
        server.recorded()[0].headers["x-trace"],
        "fine value\twith tab"
    );
}

/// Static `#[headers]` are checked at compile time, but metadata written by hand is not: an
/// invalid one fails every call of its method, nothing is sent, and the method's valid
/// headers are still sent by the methods that have them.
#[tokio::test]
async fn a1_an_invalid_static_header_fails_every_call_of_its_method() {
    static BAD_HEADER: MethodMeta = MethodMeta {
        key: "OrderService#bad",
        name: "bad",
        method: HttpMethod::Get,
        route: "GET /orders",
        path: &[PathPart::Literal("/orders")],
        query: &[],
        headers: &[
            ("Accept", "application/json"),
            ("X-Bad", "a\r\nX-Injected: 1"),
        ],
        idempotent: true,
        options: MethodOptions::NONE,
    };
    let (server, client) = setup().await;
    let core = client.core();
    for _ in 0..2 {
        let err = core
            .call::<Unit>(core.request(&BAD_HEADER))
            .await
            .expect_err("an invalid static header");
        assert!(err.is_request(), "{err:?}");
        assert!(err.to_string().contains("x-bad"), "{err}");
    }
    assert_eq!(server.connection_count(), 0);
    client.header("X-Trace", "after").await.unwrap();
    assert_eq!(server.recorded()[0].headers["accept"], "application/json");
}

/// A2: header-map keys that are not tokens, and framing headers, are errors; nothing is sent.
#[tokio::test]
async fn a2_header_map_names_are_validated_and_framing_headers_refused() {
    let (server, client) = setup().await;
    for bad in [
        "X-A: b",
        "",
        "X\r\n",
        "Host",
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
    ] {
        let mut map = HashMap::new();
        map.insert(bad.to_owned(), "v".to_owned());
        let err = client.create_with_headers(&map).await.unwrap_err();
        assert!(err.is_request(), "{bad:?}: {err:?}");
        let err = client.header(bad, "v").await.unwrap_err();
        assert!(err.is_request(), "{bad:?}: {err:?}");
    }
    assert_eq!(server.connection_count(), 0);
}

/// A3: path values are encoded byte for byte and never treated as already encoded.
#[tokio::test]
async fn a3_path_values_are_encoded_exactly() {
    let (server, client) = setup().await;
    let cases = [
        ("a/b", "/api/orders/a%2Fb"),
        ("../admin", "/api/orders/..%2Fadmin"),
        ("..%2Fadmin", "/api/orders/..%252Fadmin"),
        ("%2F", "/api/orders/%252F"),
        ("%2e%2e", "/api/orders/%252e%252e"),
        ("a%b", "/api/orders/a%25b"),
        (
            "a b?c#d;e=f&g+h:i@j,k",
            "/api/orders/a%20b%3Fc%23d%3Be%3Df%26g%2Bh%3Ai%40j%2Ck",
        ),
        ("ünï", "/api/orders/%C3%BCn%C3%AF"),
    ];
    for (value, _) in cases {
        assert_eq!(
            client.get_order_text(value).await.unwrap(),
            value,
            "server decodes {value:?} back"
        );
    }
    let expected: Vec<_> = cases.iter().map(|(_, wire)| wire.to_string()).collect();
    assert_eq!(server.targets(), expected);
}

/// A4: an empty, `.` or `..` path value is an error before any connection.
#[tokio::test]
async fn a4_empty_and_dot_segments_are_errors() {
    let (server, client) = setup().await;
    for bad in ["", ".", ".."] {
        let err = client.cancel(bad).await.unwrap_err();
        assert!(err.is_request(), "{bad:?}: {err:?}");
        assert!(err.to_string().contains("path variable `id`"), "{err}");
        assert_eq!(err.method_key(), Some("OrderService#cancel"));
    }
    assert_eq!(server.connection_count(), 0);
    assert!(server.recorded().is_empty());
}

/// A6: query names and values are encoded so the server parses exactly the pairs given.
#[tokio::test]
async fn a6_query_pairs_round_trip() {
    let (server, client) = setup().await;
    let values = ["x&admin=true", "1#frag", "+", " ", "%", "a=b", "é"];
    let pairs: Vec<(&str, &str)> = values.iter().map(|v| (*v, *v)).collect();
    let raw = client.find(&pairs, None, &[]).await.unwrap();
    let parsed: Vec<(String, String)> = serde_urlencoded::from_str(&raw).unwrap();
    let mut expected = vec![("fixed".to_owned(), "a b".to_owned())];
    expected.extend(values.iter().map(|v| (v.to_string(), v.to_string())));
    assert_eq!(parsed, expected);
    assert!(
        server.targets()[0].contains("x%26admin%3Dtrue=x%26admin%3Dtrue"),
        "{:?}",
        server.targets()
    );
}

/// A7: a value that looks like a template variable is never expanded again.
#[tokio::test]
async fn a7_values_are_not_re_expanded() {
    let (server, client) = setup().await;
    for _ in 0..100 {
        assert_eq!(client.get_item("{item}", "x").await.unwrap(), "{item}|x");
    }
    assert!(server
        .targets()
        .iter()
        .all(|t| t == "/api/orders/%7Bitem%7D/items/x"));
}

/// A8: values cannot change the host; they stay encoded in the path.
#[tokio::test]
async fn a8_values_cannot_override_the_host() {
    let (server, client) = setup().await;
    for value in [
        "//evil.test/x",
        "http://evil.test/",
        "@evil.test",
        "\\evil.test",
    ] {
        assert_eq!(client.get_order_text(value).await.unwrap(), value);
    }
    for seen in server.recorded() {
        assert_eq!(seen.headers["host"], server.addr.to_string());
        assert!(
            seen.target.starts_with("/api/orders/") && !seen.target[12..].contains('/'),
            "{}",
            seen.target
        );
    }
}

/// A9: oversized request targets and header blocks are errors before connecting.
#[tokio::test]
async fn a9_size_bombs_fail_before_connecting() {
    let (server, client) = setup().await;
    let huge = "x".repeat(1024 * 1024);
    assert!(client
        .get_order_text(&huge)
        .await
        .unwrap_err()
        .to_string()
        .contains("over the 8192-byte limit"));
    let many: Vec<(&str, &str)> = (0..10_000).map(|_| ("k", "v")).collect();
    assert!(client
        .find(&many, None, &[])
        .await
        .unwrap_err()
        .is_request());
    let headers: Vec<(String, String)> = (0..1000)
        .map(|i| (format!("x-h{i}"), "v".repeat(100)))
        .collect();
    assert!(client
        .create_with_headers(&headers)
        .await
        .unwrap_err()
        .is_request());
    assert_eq!(server.connection_count(), 0);
}

/// A10: secrets never reach logs, `Debug` or `Display`, at the most verbose log level.
#[tokio::test]
async fn a10_secrets_never_reach_logs_debug_or_errors() {
    let (captured, _guard) = Captured::install();

    let router = Router::new().fallback(any(|| async {
        (
            http::StatusCode::UNAUTHORIZED,
            [("set-cookie", "session=c00k1e"), ("x-visible", "shown")],
            "denied",
        )
    }));
    let server = Server::start(router).await;
    let url = server.url().replace("http://", "http://user:pw@");
    let client = OrderClient::builder()
        .url(url)
        .log_level(LogLevel::Full)
        .retryer(Retryer::never())
        .interceptor(BearerAuth::new("s3cr3t"))
        .interceptor(interceptor_fn(|req: &mut RequestTemplate| {
            req.append_query("api_key", "k3y");
            req.insert_sensitive_header("x-api-key", "hunter2")?;
            req.insert_header("cookie", "id=c00k1e")?;
            req.insert_header("x-marked", "m4rk3d")?;
            req.mark_sensitive("x-marked");
            Ok(())
        }))
        .build()
        .unwrap();
    let err = client.raw().await.unwrap_err();
    let logs = captured.text();
    assert!(
        logs.contains("--> GET") && logs.contains("<-- 401"),
        "logging is on: {logs}"
    );
    assert!(
        logs.contains("x-visible"),
        "non-sensitive headers are logged: {logs}"
    );
    let shown = format!("{logs}\n{err}\n{err:?}\n{client:?}");
    for secret in [
        "s3cr3t",
        ":pw@",
        "k3y",
        "hunter2",
        "c00k1e",
        "m4rk3d",
        "dXNlcjpwdw",
    ] {
        assert!(!shown.contains(secret), "{secret} leaked in:\n{shown}");
    }
    let seen = &server.recorded()[0];
    assert_eq!(
        seen.headers["authorization"], "Bearer s3cr3t",
        "the secret is still sent"
    );
    assert!(seen.target.ends_with("api_key=k3y"));
}
