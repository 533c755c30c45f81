//! `Authorization` values: checked by the one header rule (feign-header-rules'), and marked
//! sensitive so they are redacted in logs, `Debug` output and errors. On the ground floor: it
//! asks nothing of the rest of the crate.

use base64::Engine as _;
use http::HeaderValue;

/// `value` as a sensitive header value; `None` when it is not a valid one.
pub(crate) fn sensitive(value: &str) -> Option<HeaderValue> {
    if !feign_header_rules::is_valid_value(value.as_bytes()) {
        return None;
    }
    let mut value = HeaderValue::try_from(value).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// `Bearer <token>` as a sensitive header value; `None` when it is not a valid one.
pub(crate) fn bearer(token: &str) -> Option<HeaderValue> {
    sensitive(&format!("Bearer {token}"))
}

/// `Basic <base64(user:password)>` (RFC 7617) as a sensitive header value; `None` when the
/// name or password cannot be sent in a header.
pub(crate) fn basic(user: &str, password: &str) -> Option<HeaderValue> {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    sensitive(&format!("Basic {encoded}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_values_follow_rfc_7617() {
        let value = basic("Aladdin", "open sesame").unwrap();
        assert_eq!(value, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
        assert!(value.is_sensitive());
    }

    #[test]
    fn values_with_control_bytes_are_refused() {
        assert!(bearer("abc\r\nX-Injected: 1").is_none());
        assert!(sensitive("ok").unwrap().is_sensitive());
    }
}
