//! Properties of header checks over generated names and values: `feign_header_rules` accepts
//! exactly the RFC 9110 tokens that are not framing headers (in any case) and the values of visible
//! ASCII, space and tab; and every way the runtime adds a header (a parameter, a header map, an
//! interceptor, a builder default, `DefaultHeaders`, `BearerAuth`'s token, `RequestId`'s name)
//! accepts exactly what those rules accept, refusing before anything is sent, and sends what it
//! accepts unchanged to a real server. `#[feign_client]` checks its header literals with the same
//! two functions (`feign-macros/src/header.rs`); its refusals are the trybuild cases of
//! `ui-tests/`.
//!
//! Case counts come from `PROPTEST_CASES` when set (see `feign_test_support::proptest_cases`).

use std::sync::{Arc, Mutex};

use axum::routing;
use axum::Router;
use feign_core::interceptor::{interceptor_fn, DefaultHeaders, RequestId};
use feign_core::{BearerAuth, Builder, Error, RequestTemplate, Retryer};
use feign_header_rules::{
    check_name, check_value, is_forbidden_name, is_valid_name, is_valid_value, NameError,
    ValueError, FORBIDDEN_NAMES,
};
use feign_test_support::{proptest_cases, OrderClient, Server};
use proptest::prelude::*;
use proptest::sample::Index;

/// RFC 9110's `tchar`, written out here rather than taken from the crate under test.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// What a header value may hold: HTAB, SP and visible ASCII; no other control, no DEL, no
/// byte above 0x7e.
fn is_safe_value_byte(b: u8) -> bool {
    b == b'\t' || (b' '..=b'~').contains(&b)
}

/// Characters a name or value must not hold, among them every kind of control.
fn bad_char() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select(vec![
            '\r', '\n', '\0', '\u{7f}', '\u{1b}', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{e9}',
            '\u{FEFF}',
        ]),
        (0u8..0x20).prop_map(char::from),
        any::<char>(),
    ]
}

/// `text` with `c` put in at `at`.
fn with_char(text: String, at: Index, c: char) -> String {
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let mut text = text;
    text.insert(boundaries[at.index(boundaries.len())], c);
    text
}

/// A forbidden name in some mix of upper and lower case.
fn forbidden_name() -> impl Strategy<Value = String> {
    (
        prop::sample::select(FORBIDDEN_NAMES.to_vec()),
        prop::collection::vec(any::<bool>(), 20),
    )
        .prop_map(|(name, upper)| {
            name.chars()
                .zip(upper)
                .map(|(c, upper)| if upper { c.to_ascii_uppercase() } else { c })
                .collect()
        })
}

fn name() -> impl Strategy<Value = String> {
    let token = "[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}";
    prop_oneof![
        4 => token,
        2 => forbidden_name(),
        2 => (token, any::<Index>(), prop_oneof![bad_char(), prop::sample::select(
            vec![' ', ':', '"', '(', ')', '/', '@', '[', ']', '{', '}', '?', '=', ',', ';', '\\', '\t']
        )])
            .prop_map(|(name, at, c)| with_char(name, at, c)),
        1 => Just(String::new()),
        1 => "\\PC{0,6}",
    ]
}

fn value() -> impl Strategy<Value = String> {
    let visible = "[ -~\t]{0,16}";
    prop_oneof![
        4 => visible,
        3 => (visible, any::<Index>(), bad_char()).prop_map(|(v, at, c)| with_char(v, at, c)),
        1 => "(?s).{0,10}",
    ]
}

/// What a server receives of a value: HTTP drops the spaces and tabs around it.
fn as_received(value: &str) -> &str {
    value.trim_matches([' ', '\t'])
}

/// Whether the last request `server` received carried header `name` with `value`.
fn received(server: &Server, name: &str, value: &str) -> bool {
    let Some(last) = server.recorded().pop() else {
        return false;
    };
    last.headers
        .get_all(name)
        .iter()
        .any(|v| v.as_bytes() == as_received(value).as_bytes())
}

/// How a way of adding a header treats one the request already has.
#[derive(Clone, Copy, PartialEq)]
enum Existing {
    /// The header is added beside it, or replaces it.
    Added,
    /// The header is only added when the request lacks it (defaults).
    Kept,
}

/// Checks one way of adding a header: `sent` is the call's result and `before` the requests
/// the server had received before it.
fn check_path(
    way: &str,
    existing: Existing,
    sent: Result<(), Error>,
    accepted: bool,
    server: &Server,
    before: usize,
    (name, value): (&str, &str),
) -> Result<(), TestCaseError> {
    match sent {
        Ok(()) => {
            prop_assert!(accepted, "{} sent a header the rules refuse", way);
            // Every request of `OrderClient` already has `Accept`.
            let kept = existing == Existing::Kept && name.eq_ignore_ascii_case("accept");
            prop_assert!(
                kept || received(server, name, value),
                "{} did not send it as given",
                way
            );
        }
        Err(error) => {
            prop_assert!(
                !accepted,
                "{} refused a header the rules accept: {}",
                way,
                error
            );
            prop_assert_eq!(
                server.request_count(),
                before,
                "{} sent a refused header",
                way
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(proptest_cases(2_048)))]

    /// A name is accepted exactly when it is a token that no framing header's name matches in
    /// any case; a value exactly when it holds HTAB, SP and visible ASCII only. The predicates
    /// and the checks agree, and a refusal names the first character at fault.
    #[test]
    fn the_rules_accept_tokens_and_visible_ascii(name in name(), value in value()) {
        let token = !name.is_empty() && name.bytes().all(is_tchar);
        let forbidden = FORBIDDEN_NAMES.iter().any(|f| f.eq_ignore_ascii_case(&name));
        prop_assert_eq!(check_name(&name).is_ok(), token && !forbidden);
        prop_assert_eq!(is_valid_name(name.as_bytes()), token);
        prop_assert_eq!(is_forbidden_name(&name), forbidden);
        match check_name(&name) {
            Ok(()) => {}
            Err(NameError::Empty) => prop_assert!(name.is_empty()),
            Err(NameError::Forbidden) => prop_assert!(token && forbidden),
            Err(NameError::InvalidChar(c)) => {
                let first = name.chars().find(|c| !(c.is_ascii() && is_tchar(*c as u8)));
                prop_assert_eq!(Some(c), first);
            }
        }

        // `RequestId` takes a name only: the same rule.
        prop_assert_eq!(
            RequestId::with_header(&name).is_ok(),
            check_name(&name).is_ok(),
            "RequestId::with_header({:?})",
            name
        );

        let safe = value.bytes().all(is_safe_value_byte);
        prop_assert_eq!(check_value(&value).is_ok(), safe);
        prop_assert_eq!(is_valid_value(value.as_bytes()), safe);
        let first_bad = value.chars().find(|c| !(c.is_ascii() && is_safe_value_byte(*c as u8)));
        match check_value(&value) {
            Ok(()) => prop_assert_eq!(first_bad, None),
            Err(ValueError::Control(c)) => {
                prop_assert!(c.is_ascii_control() && c != '\t');
                prop_assert_eq!(Some(c), first_bad);
            }
            Err(ValueError::NonAscii(c)) => {
                prop_assert!(!c.is_ascii());
                prop_assert_eq!(Some(c), first_bad);
            }
        }
    }
}

/// A client of `server` that tries each call once.
fn builder(server: &Server) -> Builder<OrderClient> {
    OrderClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
}

#[test]
fn every_runtime_path_accepts_what_the_rules_accept() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The header the interceptor adds to the next call, and whether it marks it sensitive.
    let next: Arc<Mutex<(String, String, bool)>> = Arc::default();
    let (server, client, intercepted) = runtime.block_on(async {
        let server = Server::start(Router::new().fallback(routing::any(|| async { "" }))).await;
        let client = builder(&server).build().unwrap();
        let pending = next.clone();
        let intercepted = builder(&server)
            .interceptor(interceptor_fn(move |request: &mut RequestTemplate| {
                let (name, value, sensitive) = pending.lock().unwrap().clone();
                if sensitive {
                    request.insert_sensitive_header(&name, &value)
                } else {
                    request.insert_header(&name, &value)
                }
            }))
            .build()
            .unwrap();
        (server, client, intercepted)
    });
    let config = ProptestConfig::with_cases(proptest_cases(128));
    proptest!(config, |(name in name(), value in value(), sensitive in any::<bool>())| {
        let accepted = check_name(&name).is_ok() && check_value(&value).is_ok();
        let header = (name.as_str(), value.as_str());

        let before = server.request_count();
        let sent = runtime.block_on(client.header(&name, &value));
        check_path("a parameter", Existing::Added, sent, accepted, &server, before, header)?;

        let before = server.request_count();
        let sent = runtime.block_on(client.create_with_headers(&[header]));
        check_path("a header map", Existing::Added, sent, accepted, &server, before, header)?;

        *next.lock().unwrap() = (name.clone(), value.clone(), sensitive);
        let before = server.request_count();
        let sent = runtime.block_on(intercepted.raw()).map(drop);
        check_path("an interceptor", Existing::Added, sent, accepted, &server, before, header)?;

        let built = builder(&server)
            .default_header(name.clone(), value.clone())
            .build();
        prop_assert_eq!(built.is_ok(), accepted, "a builder default");
        if let Ok(with_default) = built {
            let before = server.request_count();
            let sent = runtime.block_on(with_default.raw()).map(drop);
            check_path("a builder default", Existing::Kept, sent, accepted, &server, before, header)?;
        }

        let bearer = builder(&server)
            .interceptor(BearerAuth::new(&value))
            .build()
            .unwrap();
        let credential = format!("Bearer {value}");
        let before = server.request_count();
        let sent = runtime.block_on(bearer.raw()).map(drop);
        let valid = check_value(&value).is_ok();
        let authorization = ("authorization", credential.as_str());
        check_path("BearerAuth", Existing::Added, sent, valid, &server, before, authorization)?;

        let with_defaults = builder(&server)
            .interceptor(DefaultHeaders::new().header(&name, &value))
            .build()
            .unwrap();
        let before = server.request_count();
        let sent = runtime.block_on(with_defaults.raw()).map(drop);
        check_path("DefaultHeaders", Existing::Kept, sent, accepted, &server, before, header)?;
    });
}
