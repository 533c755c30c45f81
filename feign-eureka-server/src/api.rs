//! The Eureka REST API under `/eureka/` and `/eureka/v2/`: one dispatcher that splits the path
//! itself, so `apps` and `apps/`, percent-encoding and every bad input are handled in one place.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::response::Response;
use http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use percent_encoding::percent_decode_str;

use crate::answer::{
    document, empty, error_body, json, json_error, shutting_down, text, unparseable,
};
use crate::batch::REPLICATION_HEADER;
use crate::cache::{CacheKey, Form, Payload};
use crate::media::{self, Format};
use crate::peers;
use crate::rate;
use crate::registration;
use crate::registry::RenewOutcome;
use crate::replication;
use crate::state::AppState;
use crate::validate::{self, Invalid};
use crate::watch::{self, Outcome};
use feign_eureka::model::{json_to_xml, InstanceInfo, InstanceStatus};

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
    // Only a peer replicates: from anyone else the header means nothing (it would skip the
    // override rules and the replication onward, as it does in Eureka), and a batch is refused.
    let from_peer = peers::claims_replication(&parts.headers, parts.uri.path())
        && state.peers.knows(&parts, peer.ip()).await;
    let call = Call {
        state: &state,
        headers: &parts.headers,
        query: &query,
        peer,
        from_peer,
        is_replication: from_peer
            && parts
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
    let response = call.dispatch(&parts.method, &segs, body).await;
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
    state: &'a Arc<AppState>,
    headers: &'a HeaderMap,
    query: &'a [(String, String)],
    peer: SocketAddr,
    /// Whether the request claims to replicate and comes from a peer ([`peers::Peers::knows`]).
    from_peer: bool,
    /// Whether it is a peer's with the replication header.
    is_replication: bool,
}

impl Call<'_> {
    /// Answers `method` on the resource at `segs`.
    async fn dispatch(&self, method: &Method, segs: &[&str], body: Bytes) -> Response {
        let state = self.state;
        let watch_offered = state.watches.offered();
        // Every resource produces only XML and JSON: a client accepting neither gets 406 before
        // anything runs, once the method and a request body's type have been found acceptable.
        let unacceptable = (routed(method, segs)
            || (watch_offered && method == Method::GET && segs == ["watch"]))
            && media::document(self.headers).is_none()
            && !(method == Method::POST && media::body(self.headers).is_err());
        if unacceptable {
            return empty(StatusCode::NOT_ACCEPTABLE);
        }
        let registry = &state.registry;
        match (method, segs) {
            (&Method::GET, ["apps"]) => self.cached(CacheKey::AllApps).await,
            (&Method::GET, ["apps", "delta"]) => self.cached(CacheKey::Delta).await,
            (_, ["apps", app, rest @ ..]) if routed(method, segs) => {
                let app = app.to_ascii_uppercase();
                match validate::app_name(&app, &registry.config.limits) {
                    Ok(()) => self.on_app(method, app, rest, body).await,
                    Err(reason) => text(StatusCode::BAD_REQUEST, reason),
                }
            }
            (&Method::GET, ["instances", id]) => self.instance(|| registry.instance_by_id(id)),
            (&Method::GET, ["vips", vip]) => self.cached(CacheKey::Vip((*vip).to_owned())).await,
            (&Method::GET, ["svips", vip]) => self.cached(CacheKey::Svip((*vip).to_owned())).await,
            (&Method::POST, ["peerreplication", "batch"]) => self.batch(body).await,
            (&Method::GET, ["watch"]) if watch_offered => self.watch().await,
            (_, ["watch"]) if watch_offered => empty(StatusCode::METHOD_NOT_ALLOWED),
            (_, ["apps" | "instances" | "vips" | "svips" | "peerreplication", ..])
                if known(segs) =>
            {
                empty(StatusCode::METHOD_NOT_ALLOWED)
            }
            _ => empty(StatusCode::NOT_FOUND),
        }
    }

    /// Answers `method` on `apps/{app}/{rest}`, `app` checked and upper-cased.
    async fn on_app(&self, method: &Method, app: String, rest: &[&str], body: Bytes) -> Response {
        let registry = &self.state.registry;
        match (method, rest) {
            (&Method::GET, []) => self.cached(CacheKey::App(app)).await,
            (&Method::POST, []) => self.register(app, body).await,
            (&Method::GET, [id]) => self.instance(|| registry.instance(&app, id)),
            (&Method::PUT, [id]) => self.renew(&app, id),
            (&Method::DELETE, [id]) => found(registry.cancel(&app, id, self.is_replication)),
            (&Method::PUT, [id, "status"]) => self.set_status(&app, id),
            (&Method::DELETE, [id, "status"]) => self.delete_status(&app, id),
            (&Method::PUT, [id, "metadata"]) => self.metadata(&app, id),
            _ => empty(StatusCode::METHOD_NOT_ALLOWED),
        }
    }

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

    fn ldt(&self) -> Result<Option<u64>, Invalid> {
        match self.param("lastDirtyTimestamp") {
            None | Some("") => Ok(None),
            Some(raw) => raw.parse().map(Some).map_err(|_| {
                Invalid::from(format!(
                    "lastDirtyTimestamp {raw:?} is not a number of milliseconds"
                ))
            }),
        }
    }

    /// A cached document: answered from the cache when the form asked for is made already,
    /// else rendered, converted or compressed as a heavy job.
    async fn cached(&self, key: CacheKey) -> Response {
        let Some(format) = media::cached_document(self.headers) else {
            return empty(StatusCode::NOT_ACCEPTABLE);
        };
        let compressible = key.is_compressed();
        let form = self.form(format, compressible);
        let registry = &self.state.registry;
        // What the cache holds: an empty document (404) or the form asked for, answered at once.
        let cached = registry.cached_payload(&key);
        let body = match cached.as_deref().map(|p| (p.empty, p.ready(form))) {
            Some((true, _)) => None,
            Some((false, Some(body))) => Some(body),
            Some((false, None)) | None => {
                let registry = registry.clone();
                let rendered = self.state.offload.run(move || {
                    let payload = registry.payload(&key);
                    (!payload.empty).then(|| payload.form(form))
                });
                match rendered.await {
                    Some(body) => body,
                    None => return shutting_down(),
                }
            }
        };
        let Some(body) = body else {
            return empty(StatusCode::NOT_FOUND);
        };
        let mut response = document_in(form, body);
        if compressible && self.state.watches.offered() {
            // The registry and its delta tell a client it may watch instead of polling.
            response
                .headers_mut()
                .insert(watch::OFFER_HEADER, HeaderValue::from_static("1"));
        }
        response
    }

    /// The form a document is answered in: `format`, compact on `X-Eureka-Accept: compact`
    /// (any case; anything else is the full form, as in Eureka), gzipped when `compressible`
    /// and the client accepts it.
    fn form(&self, format: Format, compressible: bool) -> Form {
        let compact = self
            .headers
            .get("x-eureka-accept")
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"compact"));
        Form {
            format,
            compact,
            gzip: compressible && self.wants_gzip(),
        }
    }

    /// `payload` in `form`, made as a heavy job unless it is made already.
    async fn payload(&self, payload: Arc<Payload>, form: Form) -> Response {
        let body = match payload.ready(form) {
            Some(body) => body,
            None => match self.state.offload.run(move || payload.form(form)).await {
                Some(body) => body,
                None => return shutting_down(),
            },
        };
        document_in(form, body)
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
        let offload = &self.state.offload;
        let watched = self.state.watches.watch(registry, offload, after, wait);
        let (mut response, version) = match watched.await {
            Err(reason) => return text(StatusCode::BAD_REQUEST, reason),
            Ok(Outcome::Full) => {
                return rate::too_many(1, "too many watches waiting; poll instead");
            }
            Ok(Outcome::Closed) => return shutting_down(),
            Ok(Outcome::Unchanged(version)) => (empty(StatusCode::NO_CONTENT), version),
            Ok(Outcome::Changed(payload, version)) => (
                self.payload(payload, self.form(format, true)).await,
                version,
            ),
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

    /// `POST apps/{app}`: a registration, limited per client address (a peer's replicated
    /// ones too, as in a batch), then read, checked and stored as a heavy job.
    async fn register(&self, app: String, body: Bytes) -> Response {
        let registry = &self.state.registry;
        let now = registry.clock.now_ms();
        if let Some(limiter) = &self.state.limiter {
            if let Err(wait) = limiter.acquire(self.peer.ip(), now) {
                return rate::too_many(wait, "too many registrations from this address");
            }
        }
        if let Some(limiter) = &self.state.bytes_limiter {
            if let Err(wait) = limiter.acquire_n(self.peer.ip(), body.len() as u64, now) {
                return rate::too_many(wait, "too many bytes registered from this address");
            }
        }
        let Ok(format) = media::body(self.headers) else {
            return empty(StatusCode::UNSUPPORTED_MEDIA_TYPE);
        };
        let registry = registry.clone();
        let is_replication = self.is_replication;
        let registered = self
            .state
            .offload
            .run(move || registration::register(&registry, &app, format, &body, is_replication));
        registered.await.unwrap_or_else(shutting_down)
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
        match registry.update_metadata(app, id, &pairs) {
            Ok(updated) => found(updated),
            Err(refused) => text(StatusCode::PAYLOAD_TOO_LARGE, refused),
        }
    }

    /// `POST peerreplication/batch`: taken only from peers, applied as a heavy job.
    async fn batch(&self, body: Bytes) -> Response {
        if !self.from_peer {
            return text(
                StatusCode::FORBIDDEN,
                "replication batches are taken only from this server's peers",
            );
        }
        let Some(answer) = media::document(self.headers) else {
            return empty(StatusCode::NOT_ACCEPTABLE);
        };
        match media::body(self.headers) {
            Err(_) => empty(StatusCode::UNSUPPORTED_MEDIA_TYPE),
            // Eureka's XML reader has no form for a batch: it refuses every one.
            Ok(Format::Xml) => unparseable(Format::Xml, &"replication batches are JSON"),
            Ok(Format::Json) => {
                let (state, peer) = (self.state.clone(), self.peer.ip());
                let applied = self.state.offload.run(move || {
                    match replication::apply_batch(&state, peer, &body) {
                        Ok(response) => document(answer, Bytes::from(response.to_format(answer))),
                        Err(error) => unparseable(Format::Json, &error),
                    }
                });
                applied.await.unwrap_or_else(shutting_down)
            }
        }
    }
}

fn found(ok: bool) -> Response {
    empty(if ok {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    })
}

/// A document in `form`: its media type, and its encoding when gzipped.
fn document_in(form: Form, body: Bytes) -> Response {
    let mut response = document(form.format, body);
    if form.gzip {
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    }
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
