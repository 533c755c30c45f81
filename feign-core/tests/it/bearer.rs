//! `BearerAuth::refreshing`: one refresh for many concurrent calls, renewal ahead of expiry
//! (paused time), failed refreshes, and a token that never shows in `Debug` or errors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use axum::routing::get;
use axum::Router;
use feign_core::interceptor::{token_provider_fn, AccessToken};
use feign_core::{BearerAuth, BoxError, RequestInterceptor, RequestTemplate};
use feign_test_support::order::GET_ORDER;
use feign_test_support::{OrderClient, Server};

/// A provider that hands out `tok-1`, `tok-2`... valid for `valid`, or fails from call
/// `fail_from` on; it counts its calls.
fn provider(
    calls: Arc<AtomicUsize>,
    valid: Duration,
    fail_from: usize,
) -> impl feign_core::interceptor::TokenProvider {
    token_provider_fn(move || {
        let calls = calls.clone();
        async move {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            // Long enough for every concurrent call to find the refresh under way.
            tokio::time::sleep(Duration::from_millis(20)).await;
            if n >= fail_from {
                return Err(BoxError::from("identity provider unavailable"));
            }
            Ok(AccessToken::new(format!("tok-{n}"), valid))
        }
    })
}

/// A server answering with the `Authorization` it received.
async fn echo_authorization() -> Server {
    Server::start(Router::new().route(
        "/api/orders/{id}",
        get(|headers: HeaderMap| async move {
            headers
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default()
        }),
    ))
    .await
}

/// The request a call of `get_order(1)` would send, for driving the interceptor directly.
fn template() -> RequestTemplate {
    let client = OrderClient::builder()
        .url("http://127.0.0.1:9")
        .build()
        .unwrap();
    let mut args = client.core().request(&GET_ORDER);
    args.path(0, &1u64);
    client.core().prepare(args).unwrap()
}

async fn authorization(auth: &BearerAuth) -> Result<String, feign_core::Error> {
    let mut request = template();
    auth.intercept(&mut request).await?;
    Ok(request.headers()["authorization"]
        .to_str()
        .unwrap()
        .to_owned())
}

#[tokio::test]
async fn concurrent_calls_share_one_refresh() {
    let server = echo_authorization().await;
    let calls = Arc::new(AtomicUsize::new(0));
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(BearerAuth::refreshing(provider(
            calls.clone(),
            Duration::from_secs(300),
            usize::MAX,
        )))
        .build()
        .unwrap();
    let answers = futures_util::future::join_all((0..25).map(|_| client.get_order_text("1"))).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1, "one refresh for 25 calls");
    for answer in answers {
        assert_eq!(answer.unwrap(), "Bearer tok-1");
    }
    // A later call uses the cached token.
    assert_eq!(client.get_order_text("1").await.unwrap(), "Bearer tok-1");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn concurrent_calls_share_one_failed_refresh_and_nothing_is_sent() {
    let server = echo_authorization().await;
    let calls = Arc::new(AtomicUsize::new(0));
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(BearerAuth::refreshing(provider(
            calls.clone(),
            Duration::from_secs(300),
            1,
        )))
        .build()
        .unwrap();
    let answers = futures_util::future::join_all((0..10).map(|_| client.get_order_text("1"))).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1, "no thundering herd");
    for answer in answers {
        let error = answer.unwrap_err();
        assert!(error.is_interceptor(), "{error:?}");
        assert!(error.to_string().contains("refresh failed"), "{error}");
    }
    assert_eq!(server.request_count(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_token_is_renewed_ahead_of_its_expiry() {
    let calls = Arc::new(AtomicUsize::new(0));
    let auth = BearerAuth::refreshing(provider(calls.clone(), Duration::from_secs(60), 99))
        .refresh_ahead(Duration::from_secs(10));
    assert_eq!(authorization(&auth).await.unwrap(), "Bearer tok-1");
    tokio::time::advance(Duration::from_secs(45)).await;
    assert_eq!(authorization(&auth).await.unwrap(), "Bearer tok-1");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // 55 s after the fetch: within 10 s of the expiry, so renewed.
    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(authorization(&auth).await.unwrap(), "Bearer tok-2");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_failed_refresh_keeps_a_valid_token_then_fails_without_showing_it() {
    let calls = Arc::new(AtomicUsize::new(0));
    let auth = BearerAuth::refreshing(provider(calls.clone(), Duration::from_secs(60), 2))
        .refresh_ahead(Duration::from_secs(10));
    assert_eq!(authorization(&auth).await.unwrap(), "Bearer tok-1");
    tokio::time::advance(Duration::from_secs(55)).await;
    assert_eq!(
        authorization(&auth).await.unwrap(),
        "Bearer tok-1",
        "the refresh failed but the token is still valid"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    tokio::time::advance(Duration::from_secs(10)).await;
    let error = authorization(&auth).await.unwrap_err();
    assert!(error.is_interceptor(), "{error:?}");
    let shown = format!("{error} {error:?}");
    assert!(shown.contains("bearer token refresh failed"), "{shown}");
    assert!(shown.contains("identity provider unavailable"), "{shown}");
    assert!(!shown.contains("tok-"), "{shown}");
    assert!(!format!("{auth:?}").contains("tok-"));
}

#[tokio::test]
async fn an_invalid_token_fails_the_call_without_showing_it() {
    let server = echo_authorization().await;
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(BearerAuth::refreshing(token_provider_fn(|| async {
            Ok(AccessToken::without_expiry("secret-part\r\nX-Injected: 1"))
        })))
        .build()
        .unwrap();
    let error = client.get_order_text("1").await.unwrap_err();
    assert!(error.is_interceptor(), "{error:?}");
    let shown = format!("{error} {error:?}");
    assert!(shown.contains("not a valid header value"), "{shown}");
    assert!(!shown.contains("secret-part"), "{shown}");
    assert_eq!(server.request_count(), 0);
}

#[test]
fn debug_output_never_shows_a_token() {
    let token = AccessToken::new("very-secret", Duration::from_secs(1));
    assert!(!format!("{token:?}").contains("very-secret"));
    let fixed = BearerAuth::new("very-secret");
    assert!(!format!("{fixed:?}").contains("very-secret"));
    let refreshing = BearerAuth::refreshing(token_provider_fn(|| async {
        Ok(AccessToken::without_expiry("very-secret"))
    }));
    assert!(!format!("{refreshing:?}").contains("very-secret"));
}
