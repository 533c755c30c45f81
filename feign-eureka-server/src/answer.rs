//! The answers several parts of the server give: plain-text reasons, Spring Boot's JSON error
//! body, a document of a media type, Eureka's answer to a body it cannot read, and 503 while
//! shutting down.

use std::fmt;

use axum::body::{Body, Bytes};
use axum::response::Response;
use http::{header, HeaderValue, StatusCode};

use crate::media::Format;
use feign_eureka::model::json_to_xml;

/// Spring Boot's error time stamp: RFC 3339 with milliseconds and `+00:00`.
fn error_timestamp(now_ms: u64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(now_ms);
    humantime::format_rfc3339_millis(at)
        .to_string()
        .replace('Z', "+00:00")
}

/// `status` with Spring Boot's JSON error body:
/// `{"timestamp":…,"status":404,"error":"Not Found","path":…}`, in Spring's key order.
pub(crate) fn error_body(status: StatusCode, path: &str, now_ms: u64) -> Response {
    let mut response = json(Bytes::from(json_error(status, path, now_ms)));
    *response.status_mut() = status;
    response
}

/// Spring Boot's JSON error document for `status` at `path`.
pub(crate) fn json_error(status: StatusCode, path: &str, now_ms: u64) -> Vec<u8> {
    // The path is the only text from the request, so it is escaped.
    format!(
        r#"{{"timestamp":"{}","status":{},"error":"{}","path":{}}}"#,
        error_timestamp(now_ms),
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        serde_json::Value::from(path),
    )
    .into_bytes()
}

/// A plain-text reason (400, 413, 415, 429).
pub(crate) fn text(status: StatusCode, reason: impl fmt::Display) -> Response {
    let mut response = Response::new(Body::from(reason.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// `status` without a body.
pub(crate) fn empty(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
}

/// A JSON document.
pub(crate) fn json(body: Bytes) -> Response {
    document(Format::Json, body)
}

/// A document of `format`, with its media type.
pub(crate) fn document(format: Format, body: Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.media_type()),
    );
    response
}

/// Eureka's answer to a body that does not parse: 400 with `{"error":…}` for JSON,
/// `<error><message>…</message></error>` for XML; the reason follows Eureka's words.
pub(crate) fn unparseable(format: Format, error: &dyn fmt::Display) -> Response {
    let message = format!("cannot parse request body: {error}");
    let json = serde_json::json!({ "error": message }).to_string();
    let body = match format {
        Format::Json => json,
        Format::Xml => json_to_xml(
            serde_json::json!({ "error": { "message": message } })
                .to_string()
                .as_bytes(),
        )
        .unwrap_or_default()
        .lines()
        .map(str::trim_start)
        .collect(),
    };
    let mut response = document(format, Bytes::from(body));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
}

/// 503 while shutting down, asking the client to come back (to another server) shortly.
pub(crate) fn shutting_down() -> Response {
    let mut response = text(
        StatusCode::SERVICE_UNAVAILABLE,
        "server is shutting down".to_owned(),
    );
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
