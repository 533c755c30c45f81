//! Checks on values that become part of a request.

use http::header::HeaderName;

/// Parses a header name the rules of `feign_header_rules` accept; `None` for any other.
pub(crate) fn header_name(name: &str) -> Option<HeaderName> {
    if !feign_header_rules::is_valid_name(name.as_bytes()) {
        return None;
    }
    HeaderName::from_bytes(name.as_bytes()).ok()
}

/// Headers that frame or route the message: only the transport sets them
/// ([`feign_header_rules::FORBIDDEN_NAMES`]).
pub(crate) fn is_forbidden_header(name: &HeaderName) -> bool {
    feign_header_rules::is_forbidden_name(name.as_str())
}

/// Visible ASCII, space and tab only: no CR, LF, NUL, other controls, DEL or non-ASCII bytes
/// ([`feign_header_rules::is_valid_value`]).
pub(crate) fn is_clean_header_value(value: &[u8]) -> bool {
    feign_header_rules::is_valid_value(value)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert!(!is_clean_header_value(bad.as_bytes()), "{bad:?}");
        }
        assert!(is_clean_header_value(b"Bearer abc.def\tx"));
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
            assert!(is_forbidden_header(&HeaderName::from_static(name)));
        }
        assert!(!is_forbidden_header(&HeaderName::from_static(
            "x-request-id"
        )));
    }

    #[test]
    fn header_names_are_tokens() {
        assert_eq!(header_name("X-Request-Id").unwrap(), "x-request-id");
        for bad in ["", "Bad Name", "X:", "caf\u{e9}", "a\r\nb"] {
            assert!(header_name(bad).is_none(), "{bad:?}");
        }
    }
}
