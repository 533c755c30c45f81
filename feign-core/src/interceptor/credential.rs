//! `Authorization` values: checked like any header value, and marked sensitive so they are
//! redacted in logs, `Debug` output and errors.

use http::HeaderValue;

/// `value` as a sensitive header value; `None` when it is not a valid one.
pub(super) fn credential(value: &str) -> Option<HeaderValue> {
    if !crate::pipeline::is_clean_header_value(value.as_bytes()) {
        return None;
    }
    let mut value = HeaderValue::try_from(value).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// `Bearer <token>` as a sensitive header value; `None` when it is not a valid one.
pub(super) fn bearer(token: &str) -> Option<HeaderValue> {
    credential(&format!("Bearer {token}"))
}
