//! Declarative, pluggable async HTTP clients: annotate a trait, get a typed client.
//!
//! feign-core is the runtime behind [`#[feign_client]`](feign_client), in the manner of
//! OpenFeign: the macro compiles each method's template into static metadata, and every call
//! runs through a pipeline whose stages are traits with safe defaults, each swappable on the
//! [`Builder`].
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use feign_core::{feign_client, BearerAuth, Error, Retryer};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Debug, Deserialize)]
//! pub struct Order { pub id: u64, pub item: String }
//!
//! #[derive(Serialize)]
//! pub struct NewOrder { pub item: String }
//!
//! #[feign_client("order-service", url = "http://127.0.0.1:8080", path = "/api")]
//! #[headers("Accept: application/json")]
//! pub trait OrderService {
//!     #[get("/orders/{id}")]
//!     async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;
//!
//!     #[get("/orders/{id}")]
//!     async fn try_get(&self, #[path] id: u64) -> Result<Option<Order>, Error>; // 404 -> None
//!
//!     #[post("/orders")]
//!     async fn create(&self, #[body] order: &NewOrder, #[header("X-Request-Id")] rid: &str)
//!         -> Result<Order, Error>;
//! }
//!
//! # async fn run() -> Result<(), Error> {
//! let orders = OrderServiceClient::builder()
//!     .url("http://127.0.0.1:8080")
//!     .interceptor(BearerAuth::new("token"))
//!     .retryer(Retryer::default())
//!     .build()?;
//! let order = orders.get_order(42).await?;
//! let shared: Arc<dyn OrderService> = Arc::new(orders);
//! # let _ = (order, shared);
//! # Ok(())
//! # }
//! ```
//!
//! The crate root holds what a first program needs; the rest is in modules, each item at one
//! path:
//!
//! | module | what it holds |
//! |---|---|
//! | [`codec`] | the encoders and decoders beside the root's [`Encoder`], [`Decoder`], [`ErrorDecoder`] |
//! | [`interceptor`] | request interceptors beyond auth (default headers, request ids, trace context, tokens) and response interceptors |
//! | [`retry`] | [`RetryPolicy`](retry::RetryPolicy), what a policy sees and decides, beside the root's [`Retryer`] |
//! | [`resilience`] | the classifier, the adaptive limit, breaker states and metric names, beside the root's [`CircuitBreakerConfig`], [`BulkheadConfig`], [`FallbackFactory`] |
//! | [`resolve`] | [`Resolver`](resolve::Resolver) and what a pick sees and reports: the door a load balancer comes in by |
//! | [`client`], [`transport`], [`layer`] | the transport and its settings (TLS, proxies, pool, HTTP version); what a `tower::Layer` wraps |
//! | [`body`], [`streaming`], [`multipart`], [`compression`], [`limits`] | the body a transport receives, the reader of a streaming body, multipart parts, gzip, the default size caps |
//! | [`redact`], [`attempt`], [`backoff`] | for crates built on feign-core: secrets out of logs, attempt bookkeeping, the backoff schedule |
//!
//! # The pipeline
//!
//! | Stage | Trait | Default | Builder method |
//! |---|---|---|---|
//! | Expand the template (path, query, headers, body) | compiled by the macro | values percent-encoded, checked | — |
//! | Observe the call | a `tracing` span and `metrics` per call | on; free without a subscriber or recorder | — |
//! | Change the request | [`RequestInterceptor`] | none; ready: [`BearerAuth`] (fixed or [refreshing](BearerAuth::refreshing)), [`BasicAuth`], [`interceptor::DefaultHeaders`], [`interceptor::RequestId`], [`interceptor::W3cTraceparent`] | [`interceptor`](Builder::interceptor) |
//! | Wrap the rest of the call | any `tower::Layer` over [`layer::CallRequest`] → [`Response`] | none | [`layer`](Builder::layer) |
//! | Compress | [`compression::RequestCompression`] | off; the default transport decodes gzip responses | [`request_compression`](Builder::request_compression), [`response_compression`](Builder::response_compression) |
//! | Pick the target | [`resolve::Resolver`] | the fixed URL | [`url`](Builder::url), [`load_balancer`](Builder::load_balancer) |
//! | Encode the body | [`Encoder`] | [`codec::JsonEncoder`]; also [`codec::FormEncoder`] | [`encoder`](Builder::encoder) |
//! | Send | [`client::Client`] | [`client::ReqwestClient`] (rustls, no redirects); any tower service via [`client::TowerClient`] | [`client`](Builder::client), [`tower_client`](Builder::tower_client) |
//! | See each attempt's response | [`interceptor::ResponseInterceptor`] | none | [`response_interceptor`](Builder::response_interceptor) |
//! | Decode 2xx | [`Decoder`] | [`codec::JsonDecoder`]; `()`, `String`, `Bytes`, [`Response`], [`ResponseEntity`], [`StreamingResponse`] built in | [`decoder`](Builder::decoder) |
//! | Decode other statuses | [`ErrorDecoder`] | [`codec::DefaultErrorDecoder`] (status, headers, 8 KiB of body, `Retry-After`) | [`error_decoder`](Builder::error_decoder) |
//! | Retry | [`retry::RetryPolicy`] | [`Retryer::default`] (100 ms ×1.5 to 1 s, 5 attempts, full jitter, idempotent calls only) | [`retryer`](Builder::retryer) |
//! | Guard the whole call (off by default) | [`resilience::FailureClassifier`], [`FallbackFactory`] | no circuit breaker, no bulkhead, no fallback; when on, Resilience4j's defaults (see [`resilience`]) | [`circuit_breaker`](Builder::circuit_breaker), [`bulkhead`](Builder::bulkhead), [`adaptive_concurrency`](Builder::adaptive_concurrency), [`failure_classifier`](Builder::failure_classifier), [`fallback`](Builder::fallback), [`fallback_factory`](Builder::fallback_factory); `fallback = ..` / `fallback_factory = ..` in `#[feign_client]` |
//! | Log | `tracing`, target `feign_core` | [`LogLevel::None`] | [`log_level`](Builder::log_level) |
//!
//! Every strategy is an object-safe `Send + Sync` trait stored as an `Arc<dyn …>`, with a
//! closure adapter ([`interceptor::interceptor_fn`], [`codec::encoder_fn`],
//! [`codec::decoder_fn`], [`codec::error_decoder_fn`], [`retry::retry_fn`],
//! [`client::client_fn`]).
//!
//! # Request bodies
//!
//! A `#[body]` is JSON through the [`Encoder`], sent as it is for `String`, `Vec<u8>` and
//! [`Bytes`], or streamed for a [`BodyStream`] (chunked, or with its length) and a [`FileBody`]
//! (read from disk as it goes out). A `#[multipart]` method sends its `#[part]` parameters as
//! `multipart/form-data` (see [`multipart`]). A [`client::Client`] receives a
//! [`body::RequestBody`]: buffered bytes, which every attempt can send, or a stream that can be
//! read once; a call is never retried once its streamed body has started to go out.
//!
//! # Observability
//!
//! Every call runs in one `tracing` span at `INFO`, target `feign_core`, **named by its
//! templated route** (`GET /orders/{id}`, never the expanded URL), with OpenTelemetry's HTTP
//! client attributes as fields, ready for `tracing-opentelemetry`:
//!
//! | field | value |
//! |---|---|
//! | `otel.name`, `otel.kind` | the route; `client` |
//! | `http.request.method`, `url.template` | `GET`; `/orders/{id}` (a literal query is left out) |
//! | `server.address`, `server.port`, `feign.instance.id` | the instance the last attempt went to |
//! | `http.response.status_code` | the final status |
//! | `error.type`, `otel.status_code` | the status (`503`) or the failure kind (`timeout`, `connect`, `transport`, `body`, `no_instance`, `interceptor`...); `ERROR` |
//! | `http.request.resend_count` | retries, when there were any |
//! | `feign.client`, `feign.method_key` | the service name; `OrderService#get_order` |
//! | `trace_id`, `span_id` | set by [`interceptor::W3cTraceparent`]: the ids sent in `traceparent` |
//!
//! Argument values, query values and credentials never reach a span. A span exists only when a
//! subscriber wants it: otherwise the cost is one atomic load.
//!
//! Metrics go through the [`metrics`](https://docs.rs/metrics) facade, a no-op until the
//! application installs a recorder (install it before the first call: handles are registered on
//! first use and kept):
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `http.client.request.duration` | histogram, seconds, per call (retries included) | `client`, `method_key`, `http.request.method`, `url.template`, `outcome` (Spring's `SUCCESS`, `CLIENT_ERROR`, `SERVER_ERROR`, `REDIRECTION`, `INFORMATIONAL`, `UNKNOWN`), `http.response.status_code` when a response arrived, `error.type` when the call failed |
//! | `feign.client.retries` | counter | `client`, `method_key` |
//!
//! Labels come from the method's static metadata and the status only, so the number of series
//! is bounded by the templated routes. feign-lb adds Spring's `loadbalancer.requests.*` and
//! feign-eureka `eureka.client.registry.staleness`.
//!
//! # Safe by default
//!
//! - Path values are percent-encoded as one segment (every byte outside RFC 3986 unreserved);
//!   `""`, `.` and `..` are errors before any connection. Query names and values are encoded
//!   so the server parses exactly the pairs given. No value is ever expanded twice.
//! - Header values with CR, LF, NUL, other controls or non-ASCII bytes are errors and nothing is
//!   sent; `Host`, `Content-Length`, `Transfer-Encoding`, `Connection` and other framing headers
//!   cannot be sent, whatever route they take (a parameter, `#[headers]`, an interceptor's
//!   `insert_header` or `headers_mut()`, a layer around the call).
//! - Request targets are capped (8 KiB), headers too (64 KiB); response bodies are capped
//!   (10 MiB, also after decompression): over the cap is an error and the connection is closed.
//!   Truncated bodies are errors, never short successes; hostile JSON is a decode error.
//! - Redirects are not followed unless asked, and then only same-origin ones.
//! - `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie`, headers marked sensitive,
//!   URL passwords and credential-like query values never appear in logs, `Debug` or errors.
//!
//! # Errors
//!
//! One opaque [`Error`], shaped like reqwest's: [`Error::status`], [`Error::is_timeout`],
//! [`Error::is_connect`], [`Error::is_decode`], [`Error::is_status`], [`Error::body`],
//! [`Error::method_key`], [`Error::url`] (secrets removed). A user's [`ErrorDecoder`] can hand
//! callers their own type through [`Error::custom`] and [`Error::downcast_ref`].
//! [`Error::is_circuit_open`] and [`Error::is_bulkhead_full`] tell a call refused before any
//! network I/O by a circuit breaker or a bulkhead.
//!
//! # Configuration
//!
//! With the `config` feature, [`Builder::config`] reads OpenFeign's Spring properties from a
//! [`config::Config`] (`application.yml`, `application.properties`, the environment):
//! `spring.cloud.openfeign.client.config.default.*`, then
//! `spring.cloud.openfeign.client.config.<service>.*` for the service the client was declared
//! with; the older `feign.client.config.*` names are read too and lose to the newer ones. File
//! values override what the builder was given before `config`; setters after it override the
//! file.
//!
//! | property (under `config.<default or service>.`) | builder setting |
//! |---|---|
//! | `connect-timeout` (ms, or `5s`, `PT5S`) | [`Options::connect_timeout`] |
//! | `read-timeout` (ms, or `5s`, `PT5S`) | [`Options::read_timeout`] |
//! | `follow-redirects` | [`Options::follow_redirects`] |
//! | `logger-level`: `NONE`, `BASIC`, `HEADERS`, `FULL` | [`Builder::log_level`] |
//! | `default-request-headers.<name>`: a value or a list | [`Builder::default_header`] (replaces code defaults of that name) |
//! | `default-query-parameters.<name>`: a value or a list | [`Builder::default_query_param`] (likewise) |
//! | `retryer`: `feign.Retryer.Default` or `feign.Retryer.NEVER_RETRY` | [`Builder::retryer`] with [`Retryer::default`] or [`Retryer::never`] |
//! | `dismiss404` | [`Builder::dismiss_404`] |
//! | `url` | [`Builder::url`] |
//! | `ssl-bundle` | the Spring Boot PEM SSL bundle of that name: [`Builder::tls`] with [`transport::Tls::from_ssl_bundle`] |
//! | `hedging.enabled` | [`Builder::hedging`] on (with `hedging.delay`, or the delay set in code) or off; without it the keys below only change hedging set in code |
//! | `hedging.delay` (ms, or `50ms`, `PT0.05S`) | [`HedgingConfig::after`] |
//! | `hedging.max-hedges` (1 to 10) | [`HedgingConfig::max_hedges`] |
//! | `hedging.percentile` (`0.95` or `p95`; `hedging.delay` until warmed up) | [`HedgingConfig::percentile`] |
//! | `hedging.min-delay` (ms, or `5ms`, `PT0.005S`) | [`HedgingConfig::min_delay`] |
//!
//! ## Transport properties
//!
//! `spring.cloud.openfeign.httpclient.*` (and the older `feign.httpclient.*`) set every client's
//! transport, before the client sections above, whose `connect-timeout`, `read-timeout`,
//! `follow-redirects` and `ssl-bundle` win. Spring Cloud OpenFeign gives them to Apache
//! HttpClient 5 or OkHttp; here they map onto the reqwest transport where they mean the same:
//!
//! | property (under `httpclient.`) | builder setting |
//! |---|---|
//! | `disable-ssl-validation` | [`transport::Tls::danger_accept_invalid_certs`] (and a warning at build) |
//! | `max-connections-per-route` | [`Builder::pool_max_idle_per_host`]: the idle connections kept per host (Apache caps all connections; hyper does not) |
//! | `time-to-live`, `time-to-live-unit` (`SECONDS` by default) | [`Builder::pool_idle_timeout`], as Spring's OkHttp pool reads it |
//! | `connection-timeout` (ms) | [`Options::connect_timeout`] |
//! | `follow-redirects` | [`Options::follow_redirects`] |
//! | `hc5.socket-timeout`, `hc5.socket-timeout-unit`; `ok-http.read-timeout` | [`Options::read_timeout`] |
//! | `ok-http.protocols`: `[H2_PRIOR_KNOWLEDGE]`, `[HTTP_1_1]`, or `HTTP_2` with `HTTP_1_1` | [`Builder::http_protocol`]: [`transport::HttpProtocol::Http2PriorKnowledge`], [`transport::HttpProtocol::Http1Only`], [`transport::HttpProtocol::Auto`] |
//! | `http2.version`: `HTTP_2`, `HTTP_1_1` | [`transport::HttpProtocol::Auto`], [`transport::HttpProtocol::Http1Only`] |
//! | `ssl-bundle`, `hc5.ssl-bundle` | every client's [`transport::Tls`], from the named PEM bundle |
//! | `max-connections` | checked and warned about: the pool has no total cap; a bulkhead caps concurrent calls |
//! | `enabled`, `hc5.enabled`, `connection-timer-repeat`, `hc5.pool-concurrency-policy`, `hc5.pool-reuse-policy`, `hc5.connection-request-timeout(-unit)` | checked and accepted, no effect: they choose or tune Apache's client, and hyper's pool neither sweeps on a timer nor makes calls wait for a connection |
//!
//! Spring Boot's PEM SSL bundles (`spring.ssl.bundle.pem.<name>.*`: `truststore.certificate`,
//! `keystore.certificate`, `keystore.private-key`, `keystore.private-key-password`,
//! `options.enabled-protocols`) are read as [`transport::Tls::from_ssl_bundle`] describes; JKS
//! bundles and `options.ciphers` are errors saying so.
//!
//! `spring.cloud.openfeign.client.default-config` renames the `default` section.
//!
//! ## Every key is known
//!
//! Before binding, `config` checks every key under `spring.cloud.openfeign`, `feign` and
//! `resilience4j` against one table (`src/builder/config/keys.rs`), so a Spring
//! application's `application.yml` loads as it is and a misspelt key never passes unseen:
//!
//! - a key in the tables of this page is bound;
//! - a Spring key feign-rs accepts and ignores is logged once at `WARN` (target
//!   `feign_config`), naming it and saying why. Among them: `decode-slash: true` (a `/` in a
//!   path argument is always sent as `%2F`), `lazy-attributes-resolution: true`,
//!   `micrometer.enabled: false` (metrics go through the `metrics` facade),
//!   `circuitbreaker.alphanumeric-ids.enabled`, Resilience4j's `register-health-indicator`
//!   and `event-consumer-buffer-size`, `cancel-running-future: false` (a call past its time is
//!   always dropped), and Resilience4j's `retry` and `ratelimiter` modules. A key that takes a
//!   boolean is silent when it says what feign-rs does anyway (`decode-slash: false`);
//! - a key that cannot be honoured is an error saying why: those that name Java classes
//!   (`error-decoder`, `encoder`, `decoder`, `contract`, `request-interceptors`,
//!   `capabilities`, …), Resilience4j's `record-exceptions` and predicates (use
//!   [`Builder::failure_classifier`]), and `oauth2.enabled: true`: OAuth2 is not supported
//!   yet, and a client that started without its tokens would fail every call, so it does not
//!   start (send tokens with [`BearerAuth::refreshing`] and a [`interceptor::TokenProvider`]);
//! - any other key is an error naming the nearest known key: ``
//!   `spring.cloud.openfeign.compresion.request.enabled` in application.yml: unknown property, did
//!   you mean `spring.cloud.openfeign.compression.request.enabled`? ``
//!
//! The table lists every key with its reason; it is the one list of the keys feign-core
//! accepts and ignores.
//!
//! A value that does not parse is an error naming the key and its file.
//!
//! ## Compression properties
//!
//! Spring Cloud OpenFeign's compression switches apply to every client (the older
//! `feign.compression.*` names are read too):
//!
//! | property | builder setting |
//! |---|---|
//! | `spring.cloud.openfeign.compression.request.enabled` | [`Builder::request_compression`] with [`compression::RequestCompression::default`] (`false` removes one set in code) |
//! | `spring.cloud.openfeign.compression.request.mime-types` (a list) | [`compression::RequestCompression::mime_types`] |
//! | `spring.cloud.openfeign.compression.request.min-request-size` (bytes) | [`compression::RequestCompression::min_request_size`] |
//! | `spring.cloud.openfeign.compression.response.enabled` | [`Builder::response_compression`] |
//!
//! ## Circuit breaker and bulkhead properties
//!
//! `spring.cloud.openfeign.circuitbreaker.enabled: true` (or the older
//! `feign.circuitbreaker.enabled`) puts a circuit breaker around the client's calls, one per
//! method as in Spring; `false` removes one set in code. `group.enabled` is accepted and changes
//! nothing: Spring keeps a breaker per method with it too and looks their settings up under the
//! client's name (`configs.<service>` below), which feign-rs always does. A breaker shared by
//! the whole client is [`resilience::BreakerScope::PerClient`], set in code.
//!
//! Resilience4j's Spring Boot properties set the breaker, the bulkhead and the time limit, each
//! later section over the earlier: `resilience4j.circuitbreaker.configs.default.*`, then
//! `resilience4j.circuitbreaker.configs.<service>.*` (Spring's group config; `<service>` is the
//! service name the client was declared with, relaxed), then
//! `resilience4j.circuitbreaker.instances.<service>.*`, and likewise under `resilience4j.bulkhead`
//! and `resilience4j.timelimiter`. Any `resilience4j.bulkhead` property for the client but the
//! `adaptive.*` ones turns its bulkhead on; `adaptive.enabled: true` turns the adaptive concurrency
//! limit on (alone, or inside the bulkhead), whose other `adaptive.*` settings are only checked
//! while it is off; the breaker and time limiter settings apply to a breaker switched on above or
//! set in code, and are only checked otherwise (in Spring the time limiter is part of the
//! Resilience4j circuit breaker around the call). Sections of other names (a method's breaker name
//! among them: Spring without `group.enabled` looks a method's limits up under `FooClient#bar()`;
//! feign-rs's limits are per client) are checked, not applied.
//!
//! | `resilience4j.` module | setting (after `configs.default.`, `configs.<service>.` or `instances.<service>.`) | builder setting |
//! |---|---|---|
//! | `circuitbreaker` | `failure-rate-threshold` (percent) | [`CircuitBreakerConfig::failure_rate_threshold`] |
//! | `circuitbreaker` | `slow-call-rate-threshold` (percent) | [`CircuitBreakerConfig::slow_call_rate_threshold`] |
//! | `circuitbreaker` | `slow-call-duration-threshold` (ms, or `5s`, `PT5S`) | [`CircuitBreakerConfig::slow_call_duration_threshold`] |
//! | `circuitbreaker` | `sliding-window-size` | [`CircuitBreakerConfig::sliding_window_size`] |
//! | `circuitbreaker` | `sliding-window-type`: `COUNT_BASED` only (`TIME_BASED` is an error) | — |
//! | `circuitbreaker` | `minimum-number-of-calls` | [`CircuitBreakerConfig::minimum_number_of_calls`] |
//! | `circuitbreaker` | `wait-duration-in-open-state` (ms, or `60s`, `PT60S`) | [`CircuitBreakerConfig::wait_duration_in_open_state`] |
//! | `circuitbreaker` | `permitted-number-of-calls-in-half-open-state` | [`CircuitBreakerConfig::permitted_number_of_calls_in_half_open_state`] |
//! | `circuitbreaker` | `automatic-transition-from-open-to-half-open-enabled`: `true` only (what the breaker does) | — |
//! | `bulkhead` | `max-concurrent-calls` | [`BulkheadConfig::max_concurrent_calls`] |
//! | `bulkhead` | `max-wait-duration` (ms, or `5s`, `PT5S`) | [`BulkheadConfig::max_wait_duration`] |
//! | `bulkhead` | `adaptive.enabled` (feign-rs's own) | [`Builder::adaptive_concurrency`] on or off |
//! | `bulkhead` | `adaptive.initial-limit`, `adaptive.min-limit`, `adaptive.max-limit` | [`resilience::AdaptiveLimitConfig::initial_limit`], [`min_limit`](resilience::AdaptiveLimitConfig::min_limit), [`max_limit`](resilience::AdaptiveLimitConfig::max_limit) |
//! | `bulkhead` | `adaptive.sample-window`, `adaptive.min-rtt-refresh` (ms, or `100ms`, `PT60S`) | [`resilience::AdaptiveLimitConfig::sample_window`], [`min_rtt_refresh`](resilience::AdaptiveLimitConfig::min_rtt_refresh) |
//! | `bulkhead` | `adaptive.min-samples`, `adaptive.tolerance`, `adaptive.smoothing` | [`resilience::AdaptiveLimitConfig::min_samples`], [`tolerance`](resilience::AdaptiveLimitConfig::tolerance), [`smoothing`](resilience::AdaptiveLimitConfig::smoothing) |
//! | `timelimiter` | `timeout-duration` (ms, or `1s`, `PT1S`) | [`Options::total_timeout`]: the deadline of the whole call, retries included, as Resilience4j's time limiter bounds the Feign call; a call past it fails with [`Error::is_timeout`] |
//! | `timelimiter` | `cancel-running-future`: `true` (what happens: the call is dropped) | — |
//! | all three | `base-config`: `default` only (every section inherits it anyway) | — |
//!
//! Settings Resilience4j has and feign-rs does not are warned about or refused as
//! [Every key is known](#every-key-is-known) says.
//!
//! # Cargo features
//!
//! | Feature | Default | What it does |
//! |---|---|---|
//! | `openapi` | off | `{Trait}Client::openapi()`: the client's OpenAPI 3.1 document, with the JSON Schema of each type that implements `schemars::JsonSchema`; `openapi::compare` against a server's spec, through [`openapi`] (the feign-openapi crate) |
//! | `config` | on | [`Builder::config`]: OpenFeign's Spring properties (`spring.cloud.openfeign.client.config.*`, `feign.client.config.*`, `spring.cloud.openfeign.circuitbreaker.*`, `resilience4j.circuitbreaker.*`, `resilience4j.bulkhead.*`, `resilience4j.timelimiter.*`) from `application.yml`, `application.properties` and the environment, through [`config`] (the feign-config crate) |
//! | `test-double` | off | [`double`]: a `{Trait}Double` beside every `{Trait}Client`, an implementation of the trait answering by the rules a test sets and recording the calls; enable it in `[dev-dependencies]` |
//!
//! TLS is always rustls (ring), and gzip responses are always decoded. [`Builder::tls`],
//! [`Builder::proxy`], [`Builder::pool_idle_timeout`], [`Builder::pool_max_idle_per_host`] and
//! [`Builder::http_protocol`] set a client's CA, mutual-TLS identity, TLS versions, proxies,
//! pool and HTTP version ([`transport::HttpClientConfig`] holds them all).
//!
//! A method parameter must be bound by the template: a `{var}` without a `#[path]` parameter
//! does not compile.
//!
//! ```compile_fail
//! use feign_core::{feign_client, Error};
//!
//! #[feign_client("order-service", url = "http://127.0.0.1:8080")]
//! pub trait Orders {
//!     #[get("/orders/{id}")]
//!     async fn get_order(&self) -> Result<String, Error>;
//! }
//! ```

pub mod attempt;
pub mod backoff;
pub mod body;
mod builder;
mod call_info;
pub mod client;
#[doc(hidden)]
pub mod clock;
pub mod codec;
pub mod compression;
mod cow_map;
mod credential;
#[cfg(feature = "test-double")]
pub mod double;
mod entity;
mod error;
mod escape;
mod headers;
mod hedging;
pub mod interceptor;
pub mod layer;
pub mod limits;
mod log;
mod meta;
pub mod multipart;
mod options;
mod pipeline;
pub mod redact;
pub mod resilience;
pub mod resolve;
mod response;
pub mod retry;
pub mod streaming;
mod sync;
pub mod transport;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use feign_macros::feign_client;

pub use body::file::FileBody;
pub use body::stream::BodyStream;
pub use builder::Builder;
pub use codec::decoder::Decoder;
pub use codec::encoder::Encoder;
pub use codec::error_decoder::ErrorDecoder;
pub use entity::ResponseEntity;
pub use error::{BoxError, Error};
pub use hedging::HedgingConfig;
pub use interceptor::auth::{BasicAuth, BearerAuth};
pub use interceptor::request::RequestInterceptor;
pub use interceptor::template::RequestTemplate;
pub use options::{LogLevel, Options};
pub use resilience::config::{BulkheadConfig, CircuitBreakerConfig};
pub use resilience::fallback::FallbackFactory;
pub use response::Response;
pub use retry::retryer::Retryer;
pub use streaming::response::StreamingResponse;

/// Spring-style configuration (feature `config`): the [`feign_config`] crate, whose
/// `Config` [`Builder::config`] reads.
#[cfg(feature = "config")]
pub use feign_config as config;

/// OpenAPI documents of clients (feature `openapi`): the [`feign_openapi`] crate, whose
/// `OpenApi` the generated `{Trait}Client::openapi()` returns, with `compare` and
/// `DeclaresResponses`.
#[cfg(feature = "openapi")]
pub use feign_openapi as openapi;

pub use async_trait::async_trait;
pub use bytes::Bytes;
pub use erased_serde;
pub use http;
