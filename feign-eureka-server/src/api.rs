//! The Eureka REST API under `/eureka/` and `/eureka/v2/`: one dispatcher that splits the path
//! itself, so `apps` and `apps/`, percent-encoding and every bad input are handled in one place.

use std::borrow::Cow;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use percent_encoding::percent_decode_str;

use crate::answer::{document, error_body, json, json_error, shutting_down, text};
use crate::batch::{
    Action, BatchResponse, ItemResponse, ReplicationItem, ReplicationList, REPLICATION_HEADER,
};
use crate::cache::{CacheKey, Payload};
use crate::media::{self, Format};
use crate::rate;
use crate::registry::RenewOutcome;
use crate::replication;
use crate::state::AppState;
use crate::validate::{self, Invalid};
use crate::watch::{self, Outcome};
use feign_eureka::model::{json_to_xml, xml_to_json, InstanceInfo, InstanceStatus};

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
    let watch_offered = state.watches.offered();
    // Every resource produces only XML and JSON: a client accepting neither gets 406 before
    // anything runs, once the method and a request body's type have been found acceptable.
    let unacceptable = (routed(&parts.method, &segs)
        || (watch_offered && parts.method == Method::GET && segs == ["watch"]))
        && media::document(&parts.headers).is_none()
        && !(parts.method == Method::POST && media::body(&parts.headers).is_err());
    let response = match (&parts.method, segs.as_slice()) {
        _ if unacceptable => empty(StatusCode::NOT_ACCEPTABLE),
        (&Method::GET, ["apps"]) => call.cached(CacheKey::AllApps),
        (&Method::GET, ["apps", "delta"]) => call.cached(CacheKey::Delta),
        (&Method::GET, ["apps", app]) => call.with_app(app, |app| call.cached(CacheKey::App(app))),
        (&Method::POST, ["apps", app]) => call.with_app(app, |app| call.register(&app, &body)),
        (&Method::GET, ["apps", app, id]) => call.with_app(app, |app| {
            call.instance(|| state.registry.instance(&app, id))
        }),
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
        (&Method::GET, ["instances", id]) => call.instance(|| state.registry.instance_by_id(id)),
        (&Method::GET, ["vips", vip]) => call.cached(CacheKey::Vip((*vip).to_owned())),
        (&Method::GET, ["svips", vip]) => call.cached(CacheKey::Svip((*vip).to_owned())),
        (&Method::POST, ["peerreplication", "batch"]) => call.batch(&body),
        (&Method::GET, ["watch"]) if watch_offered => call.watch().await,
        (_, ["watch"]) if watch_offered => empty(StatusCode::METHOD_NOT_ALLOWED),
        (_, ["apps" | "instances" | "vips" | "svips" | "peerreplication", ..]) if known(&segs) => {
            empty(StatusCode::METHOD_NOT_ALLOWED)
        }
        _ => empty(StatusCode::NOT_FOUND),
    };
    with_error_body(
        response,
        parts.uri.path(),
        state.registry.clock.now_ms(),
        &parts.headers,
    )
}

/// A 404, 405, 406 or 415 without a body gets Spring Boot's error body, as the real server's
/// answers carry: JSON, or XML when the client accepts only that, or none when it accepts
/// neither.
fn with_error_body(response: Response, path: &str, now_ms: u64, headers: &HeaderMap) -> Response {
    let status = response.status();
    if !matches!(
        status,
        StatusCode::NOT_FOUND
            | StatusCode::METHOD_NOT_ALLOWED
            | StatusCode::NOT_ACCEPTABLE
            | StatusCode::UNSUPPORTED_MEDIA_TYPE
    ) || response.headers().contains_key(header::CONTENT_TYPE)
    {
        return response;
    }
    match media::error_page(headers) {
        Some((Format::Json, _)) => error_body(status, path, now_ms),
        Some((Format::Xml, content_type)) => xml_error_body(status, path, now_ms, content_type),
        None => response,
    }
}

/// `status` with Spring Boot's XML error body, unindented:
/// `<Map><timestamp>…</timestamp><status>404</status><error>Not Found</error><path>…</path></Map>`.
fn xml_error_body(
    status: StatusCode,
    path: &str,
    now_ms: u64,
    content_type: &'static str,
) -> Response {
    // The JSON error body under a `Map` root, in XML; Spring writes it on one line (a raw
    // request path holds no line breaks, so every one is indentation).
    let json = format!(
        r#"{{"Map":{}}}"#,
        String::from_utf8_lossy(&json_error(status, path, now_ms))
    );
    let xml = json_to_xml(json.as_bytes()).unwrap_or_default();
    let body: String = xml.lines().map(str::trim_start).collect();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// Whether the resource at `segs` answers `method` (else 404 or 405).
fn routed(method: &Method, segs: &[&str]) -> bool {
    let allowed: &[Method] = match segs {
        ["apps"] | ["apps", "delta"] | ["instances", _] | ["vips" | "svips", _] => &[Method::GET],
        ["apps", _] => &[Method::GET, Method::POST],
        ["apps", _, _] => &[Method::GET, Method::PUT, Method::DELETE],
        ["apps", _, _, "status"] => &[Method::PUT, Method::DELETE],
        ["apps", _, _, "metadata"] => &[Method::PUT],
        ["peerreplication", "batch"] => &[Method::POST],
        _ => &[],
    };
    allowed.contains(method)
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
        let Some(format) = media::cached_document(self.headers) else {
            return empty(StatusCode::NOT_ACCEPTABLE);
        };
        let compressible = key.is_compressed();
        let payload = self.state.registry.payload(&key);
        if payload.empty {
            return empty(StatusCode::NOT_FOUND);
        }
        let mut response = self.payload(format, &payload, compressible);
        if compressible && self.state.watches.offered() {
            // The registry and its delta tell a client it may watch instead of polling.
            response
                .headers_mut()
                .insert(watch::OFFER_HEADER, HeaderValue::from_static("1"));
        }
        response
    }

    fn payload(&self, format: Format, payload: &Payload, compressible: bool) -> Response {
        // `X-Eureka-Accept: compact` (any case); anything else is the full form, as in Eureka.
        let compact = self
            .headers
            .get("x-eureka-accept")
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"compact"));
        if compressible && self.wants_gzip() {
            document_gzip(format, payload.gzip(format, compact))
        } else {
            document(format, payload.body(format, compact))
        }
    }

    /// `GET watch?after=<version>&timeout=<ms>`: the delta once the registry holds a change
    /// after `after`, 204 when none came within the wait, 429 past the cap on watches.
    async fn watch(&self) -> Response {
        let Some(format) = media::cached_document(self.headers) else {
            return empty(StatusCode::NOT_ACCEPTABLE);
        };
        let wait = match watch::wait(self.param("timeout")) {
            Ok(wait) => wait,
            Err(reason) => return text(StatusCode::BAD_REQUEST, reason),
        };
        let after = self.param("after").filter(|after| !after.is_empty());
        let registry = &self.state.registry;
        let (mut response, version) = match self.state.watches.watch(registry, after, wait).await {
            Err(reason) => return text(StatusCode::BAD_REQUEST, reason),
            Ok(Outcome::Full) => {
                return rate::too_many(1, "too many watches waiting; poll instead");
            }
            Ok(Outcome::Closed) => return shutting_down(),
            Ok(Outcome::Unchanged(version)) => (empty(StatusCode::NO_CONTENT), version),
            Ok(Outcome::Changed(payload, version)) => {
                (self.payload(format, &payload, true), version)
            }
        };
        if let Ok(value) = HeaderValue::from_str(&version) {
            response.headers_mut().insert(watch::VERSION_HEADER, value);
        }
        response
    }

    fn instance(&self, info: impl FnOnce() -> Option<InstanceInfo>) -> Response {
        let Some(format) = media::document(self.headers) else {
            return empty(StatusCode::NOT_ACCEPTABLE);
        };
        let Some(info) = info() else {
            return empty(StatusCode::NOT_FOUND);
        };
        let body = match format {
            Format::Json => info.to_json(),
            Format::Xml => info.to_xml(),
        };
        document(format, Bytes::from(body))
    }

    /// The request body as JSON: as sent, or converted from XML. `Err` is the answer, boxed (a
    /// response is large): 415 for a body that is neither, 400 in Eureka's form for one that
    /// does not parse.
    fn json_body<'b>(&self, body: &'b [u8]) -> Result<(Format, Cow<'b, [u8]>), Box<Response>> {
        let format = media::body(self.headers)
            .map_err(|_| Box::new(empty(StatusCode::UNSUPPORTED_MEDIA_TYPE)))?;
        match format {
            Format::Json => Ok((format, Cow::Borrowed(body))),
            Format::Xml => xml_to_json(body)
                .map(|json| (format, Cow::Owned(json)))
                .map_err(|error| Box::new(unparseable(format, &error))),
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
        let (format, body) = match self.json_body(body) {
            Ok(read) => read,
            Err(response) => return *response,
        };
        let body = body.as_ref();
        let mut info = match InstanceInfo::from_json(body) {
            Ok(info) => info,
            Err(error) => return unparseable(format, &error),
        };
        if let Err(reason) = validate::data_center(&info, format == Format::Json) {
            return unparseable(format, &reason);
        }
        adopt_metadata_instance_id(&mut info);
        let limits = &registry.config.limits;
        let now = registry.clock.now_ms();
        let checked = validate::wire_values(body)
            .and_then(|()| validate::registration(&info, app, limits))
            .and_then(|()| match info.last_dirty_timestamp {
                Some(ldt) => validate::last_dirty(ldt, now, limits),
                None => Ok(()),
            });
        match checked {
            Err(Invalid::Unreadable(reason)) => return unparseable(format, &reason),
            Err(reason) => return text(StatusCode::BAD_REQUEST, reason),
            Ok(()) => {}
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
        let Some(answer) = media::document(self.headers) else {
            return empty(StatusCode::NOT_ACCEPTABLE);
        };
        let list: ReplicationList = match media::body(self.headers) {
            Err(_) => return empty(StatusCode::UNSUPPORTED_MEDIA_TYPE),
            // Eureka's XML reader has no form for a batch: it refuses every one.
            Ok(Format::Xml) => return unparseable(Format::Xml, &"replication batches are JSON"),
            Ok(Format::Json) => match serde_json::from_slice(body) {
                Ok(list) => list,
                Err(error) => return unparseable(Format::Json, &error),
            },
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
        let response = BatchResponse { response_list };
        document(answer, Bytes::from(response.to_format(answer)))
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

/// Eureka's answer to a body that does not parse: 400 with `{"error":…}` for JSON,
/// `<error><message>…</message></error>` for XML; the reason follows Eureka's words.
fn unparseable(format: Format, error: &dyn fmt::Display) -> Response {
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

fn document_gzip(format: Format, body: Bytes) -> Response {
    let mut response = document(format, body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    response
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
