//! Properties of argument encoding over generated values, read back by independent parsers
//! from what a real server received: a path value is exactly one segment holding only
//! unreserved characters and `%XX` escapes, never a dot segment, and decodes to the value
//! given; query pairs from parameters, a query map, a builder default and an interceptor decode,
//! with both the `url` crate's form parser and serde_urlencoded, to the pairs given, in order.
//!
//! Case counts come from `PROPTEST_CASES` when set (see `feign_test_support::proptest_cases`).

use std::sync::{Arc, Mutex};

use axum::extract::RawQuery;
use axum::routing::{self, get};
use axum::Router;
use feign_core::interceptor::interceptor_fn;
use feign_core::{Builder, RequestTemplate, Retryer};
use feign_test_support::{proptest_cases, OrderClient, Server};
use percent_encoding::percent_decode_str;
use proptest::prelude::*;

/// Values with what a path or query must escape: separators, `%`, dots, controls, any
/// character.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        2 => "[./%?#&=+;: a-zA-Z~_-]{0,6}",
        1 => prop::sample::select(vec![".", "..", "...", "%2e", "%2E%2e", "./", "+", "%", "%zz", ""])
            .prop_map(str::to_owned),
        1 => "[\u{0}-\u{1f}\u{7f}\u{80}-\u{10ffff}]{1,4}",
    ]
}

/// Whether `segment` holds only unreserved characters and well-formed `%XX` escapes.
fn is_encoded_segment(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |at: usize| bytes.get(at).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return false;
            }
            i += 3;
        } else if bytes[i].is_ascii_alphanumeric() || b"-._~".contains(&bytes[i]) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// The pairs of `query`, decoded by the `url` crate and by serde_urlencoded, which must agree.
fn decoded_pairs(query: &str) -> Result<Vec<(String, String)>, TestCaseError> {
    let by_url: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let by_serde: Vec<(String, String)> = serde_urlencoded::from_str(query)
        .map_err(|e| TestCaseError::fail(format!("serde_urlencoded: {e}: {query}")))?;
    prop_assert_eq!(&by_url, &by_serde, "{}", query);
    Ok(by_url)
}

fn fixed() -> (String, String) {
    ("fixed".to_owned(), "a b".to_owned())
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

/// A client of `server` that tries each call once.
fn builder(server: &Server) -> Builder<OrderClient> {
    OrderClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
}

#[test]
fn path_and_query_values_decode_to_what_was_given() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The pair the interceptor appends to the next call.
    let appended: Arc<Mutex<(String, String)>> = Arc::default();
    let (server, client, appending) = runtime.block_on(async {
        let router = Router::new()
            .route(
                "/api/orders",
                get(|RawQuery(q): RawQuery| async move { q.unwrap_or_default() }),
            )
            .fallback(routing::any(|| async { "" }));
        let server = Server::start(router).await;
        let client = builder(&server).build().unwrap();
        let next = appended.clone();
        let appending = builder(&server)
            .interceptor(interceptor_fn(move |request: &mut RequestTemplate| {
                let (name, value) = next.lock().unwrap().clone();
                request.append_query(&name, &value);
                Ok(())
            }))
            .build()
            .unwrap();
        (server, client, appending)
    });
    let config = ProptestConfig::with_cases(proptest_cases(128));
    proptest!(config, |(
        id in text(),
        item in text(),
        pairs in prop::collection::vec((text(), text()), 0..4),
        map in prop::collection::btree_map(text(), prop::collection::vec(text(), 0..3), 0..4),
        extra in (text(), text()),
        default in (prop_oneof![Just("fixed".to_owned()), text()], text()),
    )| {
        // Path values: one segment each, or refused before sending.
        let before = server.request_count();
        let result = runtime.block_on(client.get_item(&id, &item));
        if [&id, &item].iter().any(|v| v.is_empty() || *v == "." || *v == "..") {
            prop_assert!(result.unwrap_err().is_request());
            prop_assert_eq!(server.request_count(), before, "nothing sent");
        } else {
            result.map_err(|e| TestCaseError::fail(e.to_string()))?;
            let target = server.last_target().expect("a request");
            let parsed = url::Url::parse(&format!("http://127.0.0.1{target}"))
                .map_err(|e| TestCaseError::fail(format!("{e}: {target}")))?;
            prop_assert_eq!(parsed.query(), None, "{}", target);
            prop_assert_eq!(parsed.fragment(), None, "{}", target);
            let segments: Vec<&str> = parsed.path_segments().expect("a path").collect();
            prop_assert_eq!(segments.len(), 5, "{}", target);
            prop_assert_eq!(
                [segments[0], segments[1], segments[3]],
                ["api", "orders", "items"],
                "{}",
                target
            );
            for (segment, value) in [(segments[2], &id), (segments[4], &item)] {
                prop_assert!(is_encoded_segment(segment), "{}", target);
                prop_assert!(segment != "." && segment != "..", "{}", target);
                let decoded = percent_decode_str(segment).decode_utf8()
                    .map_err(|e| TestCaseError::fail(format!("{e}: {target}")))?;
                prop_assert_eq!(&decoded, value, "{}", target);
            }
        }

        // Query pairs from parameters.
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let query = runtime.block_on(client.find(&refs, Some(&extra.0), &[&extra.1]))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut expected = vec![fixed(), ("status".to_owned(), extra.0.clone()), ("tag".to_owned(), extra.1.clone())];
        expected.extend(owned(&refs));
        prop_assert_eq!(decoded_pairs(&query)?, expected);

        // Query pairs from a map: one pair per element, in the map's order.
        let query = runtime.block_on(client.find_map(&map))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut expected = vec![fixed()];
        expected.extend(map.iter().flat_map(|(n, vs)| vs.iter().map(move |v| (n.clone(), v.clone()))));
        prop_assert_eq!(decoded_pairs(&query)?, expected);

        // A default pair, added when the query lacks its name.
        let (name, value) = &default;
        let built = builder(&server).default_query_param(name, value).build();
        if name.is_empty() {
            prop_assert!(built.is_err(), "a default pair without a name");
        } else {
            let with_default = built.map_err(|e| TestCaseError::fail(e.to_string()))?;
            let query = runtime
                .block_on(with_default.find(&refs, None, &[]))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut expected = vec![fixed()];
            expected.extend(owned(&refs));
            if !expected.iter().any(|(n, _)| n == name) {
                expected.push(default.clone());
            }
            prop_assert_eq!(decoded_pairs(&query)?, expected);
        }

        // A pair an interceptor appends.
        *appended.lock().unwrap() = extra.clone();
        let query = runtime.block_on(appending.find(&refs, None, &[]))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut expected = vec![fixed()];
        expected.extend(owned(&refs));
        expected.push(extra);
        prop_assert_eq!(decoded_pairs(&query)?, expected);
    });
}
