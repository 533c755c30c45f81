//! The Eureka REST API under `/eureka/` and `/eureka/v2/`: one dispatcher that splits the path
//! itself, so `apps` and `apps/`, percent-encoding and every bad input are handled in one place.

use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use percent_encoding::percent_decode_str;

use crate::batch::{
    Action, BatchResponse, ItemResponse, ReplicationItem, ReplicationList, REPLICATION_HEADER,
};
use crate::cache::{gzip, CacheKey};
use crate::rate;
use crate::registry::RenewOutcome;
use crate::replication;
use crate::state::AppState;
use crate::validate::{self, Invalid};
use feign_eureka::model::{InstanceInfo, InstanceStatus};

/// Entry point for every request under `/eureka/`.
pub(crate) async fn handle(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
) -> Response {
    if state.shutting_down.load(Ordering::SeqCst) {
        return shutting_down();
    }
    let (parts, body) = request.into_parts();
    let segments = match segments(parts.uri.path()) {
        Ok(segments) => segments,
        Err(reason) => return text(StatusCode::BAD_REQUEST, reason),
    };
    let query: Vec<(String, String)> = parts
        .uri
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let call = Call {
        state: &state,
        headers: &parts.headers,
        query: &query,
        peer,
        is_replication: parts
            .headers
            .get(REPLICATION_HEADER)
            .is_some_and(|v| v.as_bytes() == b"true"),
    };
    let body = if matches!(parts.method, Method::POST | Method::PUT) {
        match read_body(&state, &parts.headers, body).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
        }
    } else {
        Bytes::new()
    };
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    let response = match (&parts.method, segs.as_slice()) {
        (&Method::GET, ["apps"]) => call.cached(CacheKey::AllApps),
        (&Method::GET, ["apps", "delta"]) => call.cached(CacheKey::Delta),
        (&Method::GET, ["apps", app]) => call.with_app(app, |app| call.cached(CacheKey::App(app))),
        (&Method::POST, ["apps", app]) => call.with_app(app, |app| call.register(&app, &body)),
        (&Method::GET, ["apps", app, id]) => {
            call.with_app(app, |app| call.instance(state.registry.instance(&app, id)))
        }
        (&Method::PUT, ["apps", app, id]) => call.with_app(app, |app| call.renew(&app, id)),
        (&Method::DELETE, ["apps", app, id]) => call.with_app(app, |app| {
            found(state.registry.cancel(&app, id, call.is_replication))
        }),
        (&Method::PUT, ["apps", app, id, "status"]) => {
            call.with_app(app, |app| call.set_status(&app, id))
        }
        (&Method::DELETE, ["apps", app, id, "status"]) => {
            call.with_app(app, |app| call.delete_status(&app, id))
        }
        (&Method::PUT, ["apps", app, id, "metadata"]) => {
            call.with_app(app, |app| call.metadata(&app, id))
        }
        (&Method::GET, ["instances", id]) => call.instance(state.registry.instance_by_id(id)),
        (&Method::GET, ["vips", vip]) => call.cached(CacheKey::Vip((*vip).to_owned())),
        (&Method::GET, ["svips", vip]) => call.cached(CacheKey::Svip((*vip).to_owned())),
        (&Method::POST, ["peerreplication", "batch"]) => call.batch(&body),
        (_, ["apps" | "instances" | "vips" | "svips" | "peerreplication", ..]) if known(&segs) => {
            empty(StatusCode::METHOD_NOT_ALLOWED)
        }
        _ => empty(StatusCode::NOT_FOUND),
    };
    with_error_body(response, parts.uri.path(), state.registry.clock.now_ms())
}

/// A 404 or 405 without a body gets Spring Boot's JSON error body, as the real server's
/// answers carry.
fn with_error_body(response: Response, path: &str, now_ms: u64) -> Response {
    let status = response.status();
    if !matches!(
        status,
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
    ) || response.headers().contains_key(header::CONTENT_TYPE)
    {
        return response;
    }
    error_body(status, path, now_ms)
}

/// `status` with Spring Boot's JSON error body:
/// `{"timestamp":…,"status":404,"error":"Not Found","path":…}`, in Spring's key order.
pub(crate) fn error_body(status: StatusCode, path: &str, now_ms: u64) -> Response {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(now_ms);
    let timestamp = humantime::format_rfc3339_millis(at).to_string();
    // The path is the only text from the request, so it is escaped.
    let body = format!(
        r#"{{"timestamp":"{}","status":{},"error":"{}","path":{}}}"#,
        timestamp.replace('Z', "+00:00"),
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        serde_json::Value::from(path),
    );
    let mut response = json(Bytes::from(body));
    *response.status_mut() = status;
    response
}

fn known(segs: &[&str]) -> bool {
    matches!(
        segs,
        ["apps"]
            | ["apps", _]
            | ["apps", _, _]
            | ["apps", _, _, "status" | "metadata"]
            | ["instances", _]
            | ["vips" | "svips", _]
            | ["peerreplication", "batch"]
    )
}

/// The decoded path segments after `/eureka/` (and an optional `v2/`), without a trailing
/// empty segment.
fn segments(path: &str) -> Result<Vec<String>, Invalid> {
    let rest = path.strip_prefix("/eureka/").unwrap_or("");
    let rest = rest.strip_prefix("v2/").unwrap_or(rest);
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    rest.split('/')
        .map(|raw| {
            percent_decode_str(raw)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| Invalid::from("path segment is not valid UTF-8"))
        })
        .collect()
}

async fn read_body(state: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
    let limit = state.registry.config.limits.body_bytes;
    let too_large = || {
        text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body larger than {limit} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| too_large())
}

struct Call<'a> {
    state: &'a AppState,
    headers: &'a HeaderMap,
    query: &'a [(String, String)],
    peer: SocketAddr,
    is_replication: bool,
}

impl Call<'_> {
    fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn wants_gzip(&self) -> bool {
        self.headers
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .any(|v| v.to_str().is_ok_and(|v| v.contains("gzip")))
    }

    fn with_app(&self, app: &str, f: impl FnOnce(String) -> Response) -> Response {
        let app = app.to_ascii_uppercase();
        match validate::app_name(&app, &self.state.registry.config.limits) {
            Ok(()) => f(app),
            Err(reason) => text(StatusCode::BAD_REQUEST, reason),
        }
    }

    fn ldt(&self) -> Result<Option<u64>, Invalid> {
        match self.param("lastDirtyTimestamp") {
            None | Some("") => Ok(None),
            Some(raw) => {
                let ldt = raw.parse().map_err(|_| {
                    Invalid::from(format!(
                        "lastDirtyTimestamp {raw:?} is not a number of milliseconds"
                    ))
                })?;
                let registry = &self.state.registry;
                validate::last_dirty(ldt, registry.clock.now_ms(), &registry.config.limits)?;
                Ok(Some(ldt))
            }
        }
    }

    fn cached(&self, key: CacheKey) -> Response {
        let payload = self.state.registry.payload(&key);
        if payload.empty {
            return empty(StatusCode::NOT_FOUND);
        }
        if self.wants_gzip() {
            json_gzip(payload.gzip())
        } else {
            json(payload.json.clone())
        }
    }

    fn instance(&self, info: Option<InstanceInfo>) -> Response {
        let Some(info) = info else {
            return empty(StatusCode::NOT_FOUND);
        };
        let body = info.to_json().into_bytes();
        if self.wants_gzip() {
            json_gzip(Bytes::from(gzip(&body)))
        } else {
            json(Bytes::from(body))
        }
    }

    fn register(&self, app: &str, body: &[u8]) -> Response {
        let registry = &self.state.registry;
        if !self.is_replication {
            if let Some(limiter) = &self.state.limiter {
                if let Err(wait) = limiter.acquire(self.peer.ip(), registry.clock.now_ms()) {
                    let mut response = text(
                        StatusCode::TOO_MANY_REQUESTS,
                        "too many registrations from this address".to_owned(),
                    );
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from(wait));
                    return response;
                }
            }
        }
        if let Err(reason) = json_body(self.headers) {
            return text(StatusCode::UNSUPPORTED_MEDIA_TYPE, reason.to_owned());
        }
        let mut info = match InstanceInfo::from_json(body) {
            Ok(info) => info,
            Err(error) => {
                return text(
                    StatusCode::BAD_REQUEST,
                    format!("cannot parse request body: {error}"),
                )
            }
        };
        adopt_metadata_instance_id(&mut info);
        let limits = &registry.config.limits;
        let now = registry.clock.now_ms();
        let checked = validate::wire_values(body)
            .and_then(|()| validate::registration(&info, app, limits))
            .and_then(|()| match info.last_dirty_timestamp {
                Some(ldt) => validate::last_dirty(ldt, now, limits),
                None => Ok(()),
            });
        if let Err(reason) = checked {
            return text(StatusCode::BAD_REQUEST, reason);
        }
        if info.last_dirty_timestamp.is_none() {
            info.last_dirty_timestamp = Some(now);
        }
        registry.register(info, self.is_replication);
        empty(StatusCode::NO_CONTENT)
    }

    fn renew(&self, app: &str, id: &str) -> Response {
        let ldt = match self.ldt() {
            Ok(ldt) => ldt,
            Err(reason) => return text(StatusCode::BAD_REQUEST, reason),
        };
        let overridden = self
            .param("overriddenstatus")
            .map(InstanceStatus::from_wire);
        match self
            .state
            .registry
            .renew(app, id, ldt, overridden, self.is_replication)
        {
            RenewOutcome::Renewed => empty(StatusCode::OK),
            RenewOutcome::NotFound => empty(StatusCode::NOT_FOUND),
            RenewOutcome::Conflict(info) => {
                let mut response = json(Bytes::from(info.to_json()));
                *response.status_mut() = StatusCode::CONFLICT;
                response
            }
        }
    }

    fn status_value(&self, required: bool) -> Result<InstanceStatus, Invalid> {
        match self.param("value") {
            None if !required => Ok(InstanceStatus::Unknown),
            None => Err("missing status value".into()),
            Some(raw) => Ok(raw.parse()?),
        }
    }

    fn set_status(&self, app: &str, id: &str) -> Response {
        let registry = &self.state.registry;
        if registry.instance(app, id).is_none() {
            return empty(StatusCode::NOT_FOUND);
        }
        let (status, ldt) = match (self.status_value(true), self.ldt()) {
            (Ok(status), Ok(ldt)) => (status, ldt),
            (Err(reason), _) | (_, Err(reason)) => return text(StatusCode::BAD_REQUEST, reason),
        };
        found(registry.update_status(app, id, status, ldt, self.is_replication))
    }

    fn delete_status(&self, app: &str, id: &str) -> Response {
        let registry = &self.state.registry;
        if registry.instance(app, id).is_none() {
            return empty(StatusCode::NOT_FOUND);
        }
        let (status, ldt) = match (self.status_value(false), self.ldt()) {
            (Ok(status), Ok(ldt)) => (status, ldt),
            (Err(reason), _) | (_, Err(reason)) => return text(StatusCode::BAD_REQUEST, reason),
        };
        found(registry.delete_status_override(app, id, status, ldt, self.is_replication))
    }

    fn metadata(&self, app: &str, id: &str) -> Response {
        let registry = &self.state.registry;
        let Some(current) = registry.instance(app, id) else {
            return empty(StatusCode::NOT_FOUND);
        };
        if let Some(limiter) = self.state.metadata_limiter.as_ref() {
            let key = (app.to_owned(), id.to_owned());
            if let Err(wait) = limiter.acquire(key, registry.clock.now_ms()) {
                return rate::too_many(wait, "too many metadata updates for this instance");
            }
        }
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (k, v) in self.query {
            if !pairs.iter().any(|(seen, _)| seen == k) {
                pairs.push((k.clone(), v.clone()));
            }
        }
        let mut merged = current.metadata;
        merged.extend(pairs.iter().cloned());
        if let Err(reason) = validate::metadata(merged.iter(), &registry.config.limits) {
            return text(StatusCode::BAD_REQUEST, reason);
        }
        found(registry.update_metadata(app, id, &pairs))
    }

    fn batch(&self, body: &[u8]) -> Response {
        if !self.state.peer_ips.contains(&self.peer.ip()) {
            return text(
                StatusCode::FORBIDDEN,
                "replication batches are taken only from this server's configured peers",
            );
        }
        let list: ReplicationList = match serde_json::from_slice(body) {
            Ok(list) => list,
            Err(error) => {
                return text(
                    StatusCode::BAD_REQUEST,
                    format!("cannot parse replication batch: {error}"),
                )
            }
        };
        let limits = &self.state.registry.config.limits;
        let response_list = list
            .replication_list
            .into_iter()
            .map(|item| {
                let valid = validate::app_name(&item.app_name, limits)
                    .and_then(|()| validate::instance_id(&item.id, limits))
                    .and_then(|()| match &item.instance_info {
                        Some(info) => validate::registration(
                            info,
                            &item.app_name.to_ascii_uppercase(),
                            limits,
                        ),
                        None => Ok(()),
                    });
                match valid {
                    Ok(()) if !self.admits_replicated(&item) => ItemResponse {
                        status_code: 503,
                        response_entity: None,
                    },
                    Ok(()) => replication::apply(&self.state.registry, item),
                    Err(_) => ItemResponse {
                        status_code: 400,
                        response_entity: None,
                    },
                }
            })
            .collect();
        let body = serde_json::to_vec(&BatchResponse { response_list }).unwrap_or_default();
        json(Bytes::from(body))
    }
}

impl Call<'_> {
    /// A replicated registration takes a token of the registration limit, as the peer's own
    /// clients' registrations would; refused ones are answered 503, which peers take as
    /// congestion, and come back through the instances' heartbeats.
    fn admits_replicated(&self, item: &ReplicationItem) -> bool {
        if item.action != Action::Register {
            return true;
        }
        let Some(limiter) = &self.state.limiter else {
            return true;
        };
        let now = self.state.registry.clock.now_ms();
        limiter.acquire(self.peer.ip(), now).is_ok()
    }
}

/// Spring Cloud's `CloudJacksonJson.updateIfNeeded`: an instance without `instanceId` but with
/// `metadata.instanceId` gets `hostName:metadata.instanceId`.
fn adopt_metadata_instance_id(info: &mut InstanceInfo) {
    if info.instance_id.as_deref().is_some_and(|id| !id.is_empty()) {
        return;
    }
    if let Some(meta) = info.metadata.get("instanceId").filter(|m| !m.is_empty()) {
        info.instance_id = Some(if meta.starts_with(&info.host_name) {
            meta.clone()
        } else {
            format!("{}:{meta}", info.host_name)
        });
    }
}

fn found(ok: bool) -> Response {
    empty(if ok {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    })
}

fn empty(status: StatusCode) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = status;
    response
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

fn json(body: Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn json_gzip(body: Bytes) -> Response {
    let mut response = json(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
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

/// Checks that a request body is declared `application/json`, as the real server's JSON reader
/// requires: the media type is parsed (parameters such as `charset` allowed, case ignored), and
/// a missing or other type is refused with the reason.
fn json_body(headers: &HeaderMap) -> Result<(), &'static str> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Err("missing Content-Type; send application/json");
    };
    let essence = value
        .to_str()
        .ok()
        .and_then(|value| value.split(';').next())
        .map(str::trim)
        .unwrap_or("");
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else if essence.eq_ignore_ascii_case("application/xml") {
        Err("xml bodies are not supported; send application/json")
    } else {
        Err("unsupported Content-Type; send application/json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_prefixes_and_trailing_slashes_give_the_same_segments() {
        let expected = vec!["apps".to_owned()];
        assert_eq!(segments("/eureka/apps").unwrap(), expected);
        assert_eq!(segments("/eureka/apps/").unwrap(), expected);
        assert_eq!(segments("/eureka/v2/apps/").unwrap(), expected);
        assert_eq!(
            segments("/eureka/apps/A/10.0.0.5%3Aa%3A1").unwrap(),
            ["apps", "A", "10.0.0.5:a:1"]
        );
        assert!(segments("/eureka/apps/%FF").is_err());
    }
}
