//! Call logging through `tracing`, with secrets redacted.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};

use crate::options::LogLevel;
use crate::redact;

/// Most body bytes shown at [`LogLevel::Full`].
const BODY_PREVIEW: usize = 4096;

fn preview(body: &Bytes) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(&body[..body.len().min(BODY_PREVIEW)])
}

pub(crate) fn request(
    level: LogLevel,
    key: &str,
    method: &Method,
    uri: &http::Uri,
    headers: &HeaderMap,
    body: &Bytes,
    streamed: Option<Option<u64>>,
) {
    if level == LogLevel::None {
        return;
    }
    let url = uri.to_string();
    let url = url.as_str();
    match level {
        LogLevel::None => {}
        LogLevel::Basic => {
            tracing::debug!(target: "feign_core", method_key = key, "--> {method} {}", redact::url(url));
        }
        LogLevel::Headers => tracing::debug!(
            target: "feign_core", method_key = key, headers = ?redact::headers(headers),
            "--> {method} {}", redact::url(url)
        ),
        LogLevel::Full => match streamed {
            None => tracing::debug!(
                target: "feign_core", method_key = key, headers = ?redact::headers(headers), body = %preview(body),
                "--> {method} {} ({} bytes)", redact::url(url), body.len()
            ),
            // A streamed body is not held, so there is nothing to show but its length.
            Some(length) => tracing::debug!(
                target: "feign_core", method_key = key, headers = ?redact::headers(headers),
                "--> {method} {} (streamed body, {})", redact::url(url),
                length.map_or_else(|| "length unknown".to_owned(), |n| format!("{n} bytes"))
            ),
        },
    }
}

pub(crate) fn response(
    level: LogLevel,
    key: &str,
    status: StatusCode,
    elapsed: Duration,
    headers: &HeaderMap,
    body: &Bytes,
) {
    match level {
        LogLevel::None => {}
        LogLevel::Basic => {
            tracing::debug!(target: "feign_core", method_key = key, "<-- {status} ({elapsed:?})");
        }
        LogLevel::Headers => tracing::debug!(
            target: "feign_core", method_key = key, headers = ?redact::headers(headers),
            "<-- {status} ({elapsed:?})"
        ),
        LogLevel::Full => tracing::debug!(
            target: "feign_core", method_key = key, headers = ?redact::headers(headers), body = %preview(body),
            "<-- {status} ({elapsed:?}, {} bytes)", body.len()
        ),
    }
}

/// A response whose body is left streaming: only its head is logged, when it arrives.
pub(crate) fn response_head(
    level: LogLevel,
    key: &str,
    status: StatusCode,
    elapsed: Duration,
    headers: &HeaderMap,
) {
    match level {
        LogLevel::None => {}
        LogLevel::Basic => {
            tracing::debug!(target: "feign_core", method_key = key, "<-- {status} ({elapsed:?}, body streamed)");
        }
        LogLevel::Headers | LogLevel::Full => tracing::debug!(
            target: "feign_core", method_key = key, headers = ?redact::headers(headers),
            "<-- {status} ({elapsed:?}, body streamed)"
        ),
    }
}

pub(crate) fn failure(level: LogLevel, key: &str, error: &crate::Error, elapsed: Duration) {
    if level != LogLevel::None {
        tracing::debug!(target: "feign_core", method_key = key, "<-- error after {elapsed:?}: {error}");
    }
}

pub(crate) fn retry(level: LogLevel, key: &str, attempt: u32, delay: Duration) {
    if level != LogLevel::None {
        tracing::debug!(target: "feign_core", method_key = key, "retrying after attempt {attempt} in {delay:?}");
    }
}

pub(crate) fn hedge(level: LogLevel, key: &str, attempt: u32) {
    if level != LogLevel::None {
        tracing::debug!(target: "feign_core", method_key = key, "no answer yet: hedging with attempt {attempt}");
    }
}
