//! Checks on values that become part of a request.

use http::header::{
    HeaderName, CONNECTION, CONTENT_LENGTH, HOST, TE, TRAILER, TRANSFER_ENCODING, UPGRADE,
};

/// Headers that frame or route the message: only the transport sets them.
pub(crate) fn is_forbidden_header(name: &HeaderName) -> bool {
    *name == HOST
        || *name == CONTENT_LENGTH
        || *name == TRANSFER_ENCODING
        || *name == CONNECTION
        || *name == TE
        || *name == TRAILER
        || *name == UPGRADE
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

/// Visible ASCII, space and tab only: no CR, LF, NUL, other controls, DEL or non-ASCII bytes.
pub(crate) fn is_clean_header_value(value: &[u8]) -> bool {
    value
        .iter()
        .all(|&b| b == b'\t' || (0x20..0x7f).contains(&b))
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
        ] {
            assert!(is_forbidden_header(&HeaderName::from_static(name)));
        }
        assert!(!is_forbidden_header(&HeaderName::from_static(
            "x-request-id"
        )));
    }
}
