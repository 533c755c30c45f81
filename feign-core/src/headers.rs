//! The headers a request may carry, by feign-header-rules' one rule, and the checks every route
//! to the wire goes through (a parameter, `#[headers]`, an interceptor, a layer, a default).
//!
//! On the ground floor of the crate: the pipeline, the interceptors and multipart encoding ask
//! it, and it asks nothing of them.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use http::HeaderMap;

use crate::error::Kind;
use crate::meta::MethodMeta;
use crate::Error;

/// Parses a header name the rules of `feign_header_rules` accept; `None` for any other.
pub(crate) fn name(name: &str) -> Option<HeaderName> {
    if !feign_header_rules::is_valid_name(name.as_bytes()) {
        return None;
    }
    HeaderName::from_bytes(name.as_bytes()).ok()
}

/// Headers that frame or route the message: only the transport sets them
/// ([`feign_header_rules::FORBIDDEN_NAMES`]).
pub(crate) fn is_forbidden(name: &HeaderName) -> bool {
    feign_header_rules::is_forbidden_name(name.as_str())
}

/// Visible ASCII, space and tab only: no CR, LF, NUL, other controls, DEL or non-ASCII bytes
/// ([`feign_header_rules::is_valid_value`]).
pub(crate) fn is_clean_value(value: &[u8]) -> bool {
    feign_header_rules::is_valid_value(value)
}

/// Why a header was refused.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The name is not a token; kept printable and short for the message.
    Name(String),
    /// A header only the transport sets (`Host`, `Content-Length`...).
    Forbidden(HeaderName),
    /// The value holds control or non-ASCII bytes.
    Value(HeaderName),
}

impl Refused {
    fn name(name: &str) -> Refused {
        Refused::Name(
            name.chars()
                .filter(char::is_ascii_graphic)
                .take(64)
                .collect(),
        )
    }

    /// The error a caller sees, of `kind` (a request's, an interceptor's, a builder's).
    pub(crate) fn into_error(self, kind: Kind) -> Error {
        let message = match self {
            Refused::Name(name) => format!("invalid header name `{name}`"),
            Refused::Forbidden(name) => {
                format!("header `{name}` is set by the transport and cannot be sent by a request")
            }
            Refused::Value(name) => {
                format!("invalid value for header `{name}`: control or non-ASCII bytes")
            }
        };
        Error::new(kind, message)
    }
}

/// Parses one header a request may carry.
pub(crate) fn parse(name: &str, value: Bytes) -> Result<(HeaderName, HeaderValue), Refused> {
    let Some(parsed) = self::name(name) else {
        return Err(Refused::name(name));
    };
    if is_forbidden(&parsed) {
        return Err(Refused::Forbidden(parsed));
    }
    if !is_clean_value(&value) {
        return Err(Refused::Value(parsed));
    }
    match HeaderValue::from_maybe_shared(value) {
        Ok(value) => Ok((parsed, value)),
        Err(_) => Err(Refused::Value(parsed)),
    }
}

/// Parses one header a call adds, with the error a caller sees when it is invalid.
pub(crate) fn parse_for_request(
    name: &str,
    value: Bytes,
) -> Result<(HeaderName, HeaderValue), Error> {
    parse(name, value).map_err(|refused| refused.into_error(Kind::Request))
}

/// Adds a header; `Content-Type` replaces an earlier one, other names accumulate.
pub(crate) fn insert(headers: &mut HeaderMap, name: HeaderName, value: HeaderValue) {
    if name == CONTENT_TYPE {
        headers.insert(name, value);
    } else {
        headers.append(name, value);
    }
}

/// A method's `#[headers]` as a map, or the first invalid one's error.
pub(crate) fn static_headers(meta: &MethodMeta) -> Result<HeaderMap, Error> {
    let mut headers = HeaderMap::new();
    for (name, value) in meta.headers {
        let (name, value) = parse_for_request(name, Bytes::from_static(value.as_bytes()))?;
        insert(&mut headers, name, value);
    }
    Ok(headers)
}

/// Checks every header about to be sent, whatever route it took: no header the transport owns
/// (`Host`, `Content-Length`, ...), and values of visible ASCII, space and tab only.
pub(crate) fn check_all(headers: &HeaderMap) -> Result<(), Error> {
    for (name, value) in headers {
        let refused = if self::name(name.as_str()).is_none() {
            Refused::name(name.as_str())
        } else if is_forbidden(name) {
            Refused::Forbidden(name.clone())
        } else if !is_clean_value(value.as_bytes()) {
            Refused::Value(name.clone())
        } else {
            continue;
        };
        return Err(refused.into_error(Kind::Request));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::{HttpMethod, MethodOptions};

    #[test]
    fn header_values_reject_controls_and_non_ascii() {
        for bad in [
            "ok\r\nX-Injected: 1",
            "a\nb",
            "a\rb",
            "a\0b",
            "\x7f",
            "\u{010D}\u{010A}",
        ] {
            assert!(!is_clean_value(bad.as_bytes()), "{bad:?}");
        }
        assert!(is_clean_value(b"Bearer abc.def\tx"));
    }

    #[test]
    fn framing_headers_are_forbidden() {
        for name in [
            "host",
            "content-length",
            "transfer-encoding",
            "connection",
            "keep-alive",
            "te",
            "trailer",
            "upgrade",
            "proxy-connection",
        ] {
            assert!(is_forbidden(&HeaderName::from_static(name)));
        }
        assert!(!is_forbidden(&HeaderName::from_static("x-request-id")));
    }

    #[test]
    fn header_names_are_tokens() {
        assert_eq!(self::name("X-Request-Id").unwrap(), "x-request-id");
        for bad in ["", "Bad Name", "X:", "caf\u{e9}", "a\r\nb"] {
            assert!(self::name(bad).is_none(), "{bad:?}");
        }
    }

    const fn meta(headers: &'static [(&'static str, &'static str)]) -> MethodMeta {
        MethodMeta {
            key: "Api#get",
            name: "get",
            method: HttpMethod::Get,
            route: "GET /",
            path: &[],
            query: &[],
            headers,
            idempotent: true,
            options: MethodOptions::NONE,
        }
    }

    #[test]
    fn static_headers_become_one_map_with_content_type_replaced() {
        let headers = static_headers(&meta(&[
            ("Accept", "application/json"),
            ("X-Tag", "a"),
            ("X-Tag", "b"),
            ("Content-Type", "text/plain"),
            ("Content-Type", "application/json"),
        ]))
        .expect("valid headers");
        assert_eq!(headers["accept"], "application/json");
        assert_eq!(headers.get_all("x-tag").iter().count(), 2);
        assert_eq!(headers.get_all("content-type").iter().count(), 1);
        assert_eq!(headers["content-type"], "application/json");
    }

    #[test]
    fn an_invalid_static_header_is_an_error_naming_it() {
        for (bad, shown) in [
            (
                meta(&[("X-Ok", "1"), ("X-Bad", "a\r\nInjected: 1")]),
                "x-bad",
            ),
            (meta(&[("Bad Name", "1")]), "BadName"),
            (meta(&[("Host", "elsewhere")]), "host"),
        ] {
            let error = static_headers(&bad).expect_err("an invalid header");
            assert!(error.to_string().contains(shown), "{error}");
        }
    }
}
