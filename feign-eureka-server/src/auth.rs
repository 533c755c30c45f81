//! HTTP basic authentication for the whole registry (the Eureka API and the dashboard), as a
//! Spring Cloud Netflix server behind Spring Security's basic auth answers: 401 with
//! `WWW-Authenticate: Basic realm="Realm"` to a request without the credentials.
//!
//! Wrong credentials are throttled per client address: after [`FAILURES`] wrong ones, an
//! address may try again once a second, and until then every request from it gets 429 with
//! `Retry-After`, the right credentials too (else the answer would still tell a guess right
//! from wrong). Other addresses are not affected, so the right credentials from elsewhere keep
//! working while one address guesses.
//!
//! Peer credentials, when the registry has them, are admitted too and mark the request as a
//! peer's (`peers.rs`); wrong ones on a request that claims to replicate count as a guess even
//! on a registry open to clients.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use feign_core::redact::Credentials;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use subtle::ConstantTimeEq;

use feign_core::clock::Clock;

use crate::config::RateLimit;
use crate::peers::{claims_replication, PeerCredentials};
use crate::rate::{too_many, RateLimiter};

/// Wrong credentials an address may send at once, and then one a second.
pub(crate) const FAILURES: RateLimit = RateLimit {
    burst: 10,
    per_second: 1,
};

/// The one `Authorization` value the registry accepts.
pub(crate) struct BasicAuth {
    expected: Box<[u8]>,
}

impl fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BasicAuth(***)")
    }
}

impl BasicAuth {
    /// Accepts `credentials`; `None` when they cannot be sent in a header (control characters).
    pub(crate) fn new(credentials: &Credentials) -> Option<BasicAuth> {
        let value = credentials.basic_authorization()?;
        Some(BasicAuth {
            expected: value.as_bytes().into(),
        })
    }

    /// Whether `headers` carry the credentials. The comparison takes the same time wherever the
    /// first difference lies, so the password cannot be guessed byte by byte from timings.
    pub(crate) fn admits(&self, headers: &HeaderMap) -> bool {
        headers
            .get(header::AUTHORIZATION)
            .is_some_and(|value| bool::from(value.as_bytes().ct_eq(&self.expected)))
    }
}

/// What [`require`] checks requests with: the credentials, when the registry has them, the
/// peer credentials, when it has those, the wrong ones each address sent, and the clock its
/// answers are stamped by.
pub(crate) struct Gate {
    basic: Option<BasicAuth>,
    peer: Option<BasicAuth>,
    failures: RateLimiter<IpAddr>,
    clock: Clock,
}

impl Gate {
    /// A gate admitting requests with `basic` (all requests without) or with `peer`, the peer
    /// credentials, which it marks as a peer's ([`PeerCredentials`]).
    pub(crate) fn new(basic: Option<BasicAuth>, peer: Option<BasicAuth>, clock: Clock) -> Self {
        Self {
            basic,
            peer,
            failures: RateLimiter::new(FAILURES),
            clock,
        }
    }
}

/// Lets a request through only with the registry's credentials or the peer credentials, when it
/// has them; marks a request with the peer credentials as a peer's.
pub(crate) async fn require(
    State(gate): State<Arc<Gate>>,
    mut request: Request,
    next: Next,
) -> Response {
    if gate.basic.is_none() && gate.peer.is_none() {
        return next.run(request).await;
    }
    let now = gate.clock.now_ms();
    let address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip());
    if let Some(address) = address {
        if let Err(wait) = gate.failures.check(&address, now) {
            return too_many(wait, "too many wrong credentials from this address");
        }
    }
    if gate
        .peer
        .as_ref()
        .is_some_and(|p| p.admits(request.headers()))
    {
        request.extensions_mut().insert(PeerCredentials);
        return next.run(request).await;
    }
    let admitted = gate
        .basic
        .as_ref()
        .is_none_or(|b| b.admits(request.headers()));
    // A request without credentials guesses nothing: only wrong ones count, and on a registry
    // open to clients, only those of a request that claims to replicate (a guess at the peer
    // credentials).
    let headers = request.headers();
    let guessed = headers.contains_key(header::AUTHORIZATION)
        && (!admitted || claims_replication(headers, request.uri().path()));
    if let Some(address) = address.filter(|_| guessed) {
        let _ = gate.failures.acquire(address, now);
    }
    if admitted {
        return next.run(request).await;
    }
    let mut response =
        crate::answer::error_body(StatusCode::UNAUTHORIZED, request.uri().path(), now);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=\"Realm\""),
    );
    response
}
