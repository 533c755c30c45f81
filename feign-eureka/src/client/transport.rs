//! HTTP to the Eureka servers: headers, failover across servers, stickiness, quarantine and
//! periodic re-selection (Eureka's `SessionedEurekaHttpClient(RetryableEurekaHttpClient(...))`).

use std::sync::Mutex;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::Method;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;

use super::endpoint::{ordered, Endpoint};
use super::error::CallError;
use super::Error;

/// At most this many servers are tried per call (`DEFAULT_NUMBER_OF_RETRIES`).
const MAX_TRIES: usize = 3;

/// Which protocol call is being made: decides which answers end the call (Eureka's legacy
/// server status evaluator) and which make it try the next server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Call {
    Register,
    Heartbeat,
    Cancel,
    FetchFull,
    FetchDelta,
    /// Push discovery's long poll (feign-eureka-server's `GET watch`).
    Watch,
}

impl Call {
    /// Whether `status` is a final answer from this server (not a reason to try another).
    fn accepts(self, status: u16) -> bool {
        if (200..300).contains(&status) || status == 302 {
            return true;
        }
        match self {
            Call::Register | Call::Heartbeat => status == 404,
            Call::Cancel => true,
            Call::FetchDelta => matches!(status, 403 | 404),
            // Not offered, or full: the client polls instead; no other server is asked.
            Call::Watch => matches!(status, 404 | 429),
            Call::FetchFull => false,
        }
    }
}

/// A server's answer. Bodies are read only for 2xx answers (error bodies are never parsed).
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Bytes,
    /// The server offers push discovery's watch (`X-Feign-Watch` on a fetch).
    pub(crate) watch_offered: bool,
    /// The registry version a watch answer names (`X-Feign-Registry-Version`).
    pub(crate) version: Option<String>,
}

/// The header on a fetch that offers the watch.
const OFFER_HEADER: &str = "x-feign-watch";
/// The header on a watch answer that carries the registry version.
const VERSION_HEADER: &str = "x-feign-registry-version";
/// The longest version kept; a longer one is not from feign-eureka-server.
const MAX_VERSION_LEN: usize = 64;

/// Transport settings.
#[derive(Clone, Debug)]
pub(crate) struct TransportConfig {
    pub(crate) connect_timeout: Duration,
    pub(crate) read_timeout: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) session_duration: Duration,
    pub(crate) my_zone: String,
    /// Seeds the server order and session lengths; random when `None`.
    pub(crate) seed: Option<u64>,
    /// TLS, proxies and pool of the HTTP client.
    pub(crate) http: feign_core::transport::HttpClientConfig,
}

struct State {
    order: Vec<Endpoint>,
    sticky: Option<Endpoint>,
    quarantine: Vec<Endpoint>,
    session_started: Instant,
    session_length: Duration,
    rng: SmallRng,
}

/// Talks to the configured Eureka servers.
pub(crate) struct Transport {
    http: reqwest::Client,
    endpoints: Vec<Endpoint>,
    config: TransportConfig,
    state: Mutex<State>,
}

impl Transport {
    pub(crate) fn new(
        endpoints: Vec<Endpoint>,
        config: TransportConfig,
    ) -> Result<Transport, Error> {
        if endpoints.is_empty() {
            return Err(Error::NoServiceUrl);
        }
        if config.http.accepts_invalid_certs() {
            tracing::warn!(
                target: "feign_eureka",
                "TLS certificate checks to the Eureka servers are OFF (danger_accept_invalid_certs): \
                 anyone on the path can answer as the registry; never use this outside a test environment"
            );
        }
        let builder = feign_core::client::reqwest_builder(
            config.connect_timeout,
            Some(config.read_timeout),
            None,
        )
        .user_agent(concat!("feign-eureka/", env!("CARGO_PKG_VERSION")));
        let http = config
            .http
            .apply(builder)
            .map_err(|e| Error::HttpClient(Box::new(e)))?
            .build()
            .map_err(|e| Error::HttpClient(Box::new(e)))?;
        let mut rng = match config.seed {
            Some(seed) => SmallRng::seed_from_u64(seed),
            None => SmallRng::from_rng(&mut rand::rng()),
        };
        let state = State {
            order: ordered(&endpoints, &config.my_zone, &mut rng),
            sticky: None,
            quarantine: Vec::new(),
            session_started: Instant::now(),
            session_length: session_length(config.session_duration, &mut rng),
            rng,
        };
        Ok(Transport {
            http,
            endpoints,
            config,
            state: Mutex::new(state),
        })
    }

    /// The servers to try for one call, best first.
    fn candidates(&self) -> Vec<Endpoint> {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *guard;
        if state.session_started.elapsed() >= state.session_length {
            // A new session: pick servers afresh, so clients spread over the servers again.
            state.order = ordered(&self.endpoints, &self.config.my_zone, &mut state.rng);
            state.sticky = None;
            state.quarantine.clear();
            state.session_started = Instant::now();
            state.session_length = session_length(self.config.session_duration, &mut state.rng);
            let first = state.order.first().map_or("", |e| e.base.as_str());
            tracing::debug!(target: "feign_eureka", server = %first, "eureka session ended; servers picked again");
        }
        let total = state.order.len();
        let threshold = total.min((total as f64 * 0.66) as usize);
        if !state.quarantine.is_empty() && state.quarantine.len() >= threshold {
            state.quarantine.clear();
        }
        let mut out: Vec<Endpoint> = state.sticky.iter().cloned().collect();
        for endpoint in &state.order {
            if !out.contains(endpoint) && !state.quarantine.contains(endpoint) {
                out.push(endpoint.clone());
            }
        }
        out.truncate(MAX_TRIES);
        out
    }

    fn record(&self, endpoint: &Endpoint, ok: bool) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if ok {
            state.sticky = Some(endpoint.clone());
            state.quarantine.retain(|e| e != endpoint);
        } else {
            if state.sticky.as_ref() == Some(endpoint) {
                state.sticky = None;
            }
            if !state.quarantine.contains(endpoint) {
                state.quarantine.push(endpoint.clone());
            }
        }
    }

    /// Sends one call, trying up to three servers; `Err` is the last failure (no credentials).
    pub(crate) async fn execute(
        &self,
        call: Call,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Bytes>,
        timeout: Option<Duration>,
    ) -> Result<Answer, CallError> {
        let mut last = CallError::NoServer;
        for endpoint in self.candidates() {
            match self
                .send(
                    &endpoint,
                    method.clone(),
                    path,
                    query,
                    body.clone(),
                    timeout,
                )
                .await
            {
                Ok(answer) if call.accepts(answer.status) => {
                    self.record(&endpoint, true);
                    return Ok(answer);
                }
                Ok(answer) => {
                    last = CallError::Status {
                        url: format!("{endpoint}{path}"),
                        status: answer.status,
                    };
                }
                Err(e) => last = e,
            }
            tracing::debug!(target: "feign_eureka", server = %endpoint, %last, "eureka call failed, trying next server");
            self.record(&endpoint, false);
        }
        Err(last)
    }

    async fn send(
        &self,
        endpoint: &Endpoint,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Bytes>,
        timeout: Option<Duration>,
    ) -> Result<Answer, CallError> {
        let url = format!("{}{path}", endpoint.base);
        let mut request = self
            .http
            .request(method, &url)
            .header(ACCEPT, "application/json");
        if !query.is_empty() {
            request = request.query(query);
        }
        if let Some(body) = body {
            request = request.header(CONTENT_TYPE, "application/json").body(body);
        }
        // feign-core's one rule for a URL's user info as an `Authorization` value.
        if let Some(value) = endpoint
            .credentials
            .as_ref()
            .and_then(|credentials| credentials.basic_authorization())
        {
            request = request.header(AUTHORIZATION, value);
        }
        // The read timeout bounds each wait for bytes; this bounds the whole exchange, so a
        // registry that trickles its answer cannot hold a call (or `start`) for ever.
        let whole = self.config.connect_timeout + self.config.read_timeout;
        request = request.timeout(timeout.map_or(whole, |timeout| timeout.min(whole)));
        let describe = |e: reqwest::Error| {
            let kind = if e.is_timeout() {
                "timed out"
            } else if e.is_connect() {
                "connection failed"
            } else if e.is_decode() {
                "undecodable body"
            } else {
                "request failed"
            };
            CallError::Request {
                url: url.clone(),
                kind,
                source: e,
            }
        };
        let mut response = request.send().await.map_err(describe)?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Ok(Answer {
                status,
                body: Bytes::new(),
                watch_offered: false,
                version: None,
            });
        }
        let headers = response.headers();
        let watch_offered = headers.contains_key(OFFER_HEADER);
        let version = headers
            .get(VERSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty() && v.len() <= MAX_VERSION_LEN)
            .map(str::to_owned);
        let limit = self.config.max_body_bytes;
        if response
            .content_length()
            .is_some_and(|len| len > limit as u64)
        {
            return Err(CallError::TooLarge {
                url: url.clone(),
                limit,
            });
        }
        let mut body = BytesMut::new();
        while let Some(chunk) = response.chunk().await.map_err(describe)? {
            if body.len() + chunk.len() > limit {
                return Err(CallError::TooLarge {
                    url: url.clone(),
                    limit,
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            body: body.freeze(),
            watch_offered,
            version,
        })
    }
}

/// A session length drawn uniformly from `[d/2, 3d/2]` (10–30 min for the default 20 min).
fn session_length(base: Duration, rng: &mut impl Rng) -> Duration {
    if base.is_zero() {
        return base;
    }
    base / 2 + rng.random_range(Duration::ZERO..=base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluator_matches_eureka_legacy_rules() {
        assert!(Call::Heartbeat.accepts(404));
        assert!(Call::Register.accepts(204));
        assert!(!Call::Register.accepts(500));
        assert!(Call::Cancel.accepts(500));
        assert!(Call::FetchDelta.accepts(403));
        assert!(!Call::FetchFull.accepts(403));
        assert!(!Call::FetchFull.accepts(503));
        assert!(Call::Watch.accepts(204) && Call::Watch.accepts(429));
        assert!(!Call::Watch.accepts(503));
    }

    #[test]
    fn session_length_is_between_half_and_one_and_a_half() {
        for _ in 0..100 {
            let d = session_length(Duration::from_secs(1200), &mut rand::rng());
            assert!(d >= Duration::from_secs(600) && d <= Duration::from_secs(1800));
        }
    }
}
