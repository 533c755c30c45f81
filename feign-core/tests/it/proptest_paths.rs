//! Case A5: random strings as path and query values reach a real server exactly as given.

use axum::extract::{Path, RawQuery};
use axum::routing::get;
use axum::Router;
use feign_core::Retryer;
use feign_test_support::{proptest_cases, OrderClient, Server};
use proptest::prelude::*;

fn wire_segment_is_clean(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                if !(bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
                {
                    return false;
                }
                i += 3;
            }
            b if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') => i += 1,
            _ => return false,
        }
    }
    true
}

#[test]
fn random_path_and_query_values_round_trip_through_a_real_server() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (server, client) = runtime.block_on(async {
        let router = Router::new()
            .route(
                "/api/orders/{id}/items/{item}",
                get(|Path((id, item)): Path<(String, String)>| async move {
                    format!("{id}\u{0}{item}")
                }),
            )
            .route(
                "/api/orders",
                get(|RawQuery(q): RawQuery| async move { q.unwrap_or_default() }),
            );
        let server = Server::start(router).await;
        let client = OrderClient::builder()
            .url(server.url())
            .retryer(Retryer::never())
            .build()
            .unwrap();
        (server, client)
    });
    let config = ProptestConfig::with_cases(proptest_cases(400));
    proptest!(config, |(id in any::<String>(), item in "[ -~]{0,12}|\\PC{1,8}", name in any::<String>(), value in any::<String>())| {
        let before = server.request_count();
        let result = runtime.block_on(client.get_item(&id, &item));
        let invalid = |s: &str| s.is_empty() || s == "." || s == "..";
        if invalid(&id) || invalid(&item) {
            prop_assert!(result.unwrap_err().is_request());
            prop_assert_eq!(server.request_count(), before, "nothing sent");
        } else {
            prop_assert_eq!(result.unwrap(), format!("{id}\u{0}{item}"));
            let target = server.last_target().unwrap();
            let segments: Vec<&str> = target.split('/').collect();
            prop_assert_eq!(segments.len(), 6, "{}", target);
            prop_assert!(segments.iter().all(|s| wire_segment_is_clean(s)), "{}", target);
        }

        let raw = runtime.block_on(client.find(&[(name.as_str(), value.as_str())], None, &[])).unwrap();
        let parsed: Vec<(String, String)> = serde_urlencoded::from_str(&raw).unwrap();
        prop_assert_eq!(parsed, vec![("fixed".to_owned(), "a b".to_owned()), (name, value)]);
    });
}
