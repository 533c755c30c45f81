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
//! # The pipeline
//!
//! | Stage | Trait | Default | Builder method |
//! |---|---|---|---|
//! | Expand the template (path, query, headers, body) | compiled by the macro | values percent-encoded, checked | — |
//! | Change the request | [`RequestInterceptor`] | none; ready: [`BearerAuth`], [`BasicAuth`], [`DefaultHeaders`], [`RequestId`] | [`interceptor`](Builder::interceptor) |
//! | Pick the target | [`Resolver`] | the fixed URL | [`url`](Builder::url), [`load_balancer`](Builder::load_balancer) |
//! | Encode the body | [`Encoder`] | [`JsonEncoder`]; also [`FormEncoder`] | [`encoder`](Builder::encoder) |
//! | Send | [`Client`] | [`ReqwestClient`] (rustls, no redirects); any tower service via [`TowerClient`] | [`client`](Builder::client), [`tower_client`](Builder::tower_client) |
//! | Decode 2xx | [`Decoder`] | [`JsonDecoder`]; `()`, `String`, `Bytes`, [`Response`] built in | [`decoder`](Builder::decoder) |
//! | Decode other statuses | [`ErrorDecoder`] | [`DefaultErrorDecoder`] (status, headers, 8 KiB of body, `Retry-After`) | [`error_decoder`](Builder::error_decoder) |
//! | Retry | [`RetryPolicy`] | [`Retryer::default`] (100 ms ×1.5 to 1 s, 5 attempts, full jitter, idempotent calls only) | [`retryer`](Builder::retryer) |
//! | Log | `tracing`, target `feign_core` | [`LogLevel::None`] | [`log_level`](Builder::log_level) |
//!
//! Every strategy is an object-safe `Send + Sync` trait stored as an `Arc<dyn …>`, with a
//! closure adapter ([`interceptor_fn`], [`encoder_fn`], [`decoder_fn`], [`error_decoder_fn`],
//! [`retry_fn`], [`client_fn`]).
//!
//! # Safe by default
//!
//! - Path values are percent-encoded as one segment (every byte outside RFC 3986 unreserved);
//!   `""`, `.` and `..` are errors before any connection. Query names and values are encoded
//!   so the server parses exactly the pairs given. No value is ever expanded twice.
//! - Header values with CR, LF, NUL, other controls or non-ASCII bytes are errors and nothing is
//!   sent; `Host`, `Content-Length`, `Transfer-Encoding`, `Connection` and other framing headers
//!   cannot come from parameters.
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
//!
//! # Cargo features
//!
//! | Feature | Default | What it does |
//! |---|---|---|
//! | (none) | — | feign-core has no optional features: TLS is rustls, gzip responses are decoded. |
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

mod builder;
mod client;
mod codec;
mod error;
mod escape;
mod interceptor;
mod log;
mod meta;
mod options;
mod pipeline;
mod redact;
mod resolve;
mod response;
mod retry;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use feign_macros::feign_client;

pub use builder::{
    Builder, DEFAULT_MAX_HEADER_BYTES, DEFAULT_MAX_REQUEST_TARGET_BYTES, DEFAULT_MAX_RESPONSE_BYTES,
};
pub use client::{
    client_fn, Client, FnClient, ReqwestClient, ResponseBody, SendOptions, TowerClient,
};
pub use codec::{
    decoder_fn, encoder_fn, error_decoder_fn, parse_retry_after, DecodeTarget, Decoder,
    DefaultErrorDecoder, Encoder, ErrorDecoder, FnDecoder, FnEncoder, FnErrorDecoder, FormEncoder,
    JsonDecoder, JsonEncoder,
};
pub use error::{BoxError, Error};
pub use interceptor::{
    interceptor_fn, BasicAuth, BearerAuth, DefaultHeaders, FnInterceptor, RequestId,
    RequestInterceptor, RequestTemplate,
};
pub use options::{LogLevel, Options};
pub use resolve::{AttemptOutcome, CallObserver, ChooseRequest, Chosen, InstanceHandle, Resolver};
pub use response::Response;
pub use retry::{retry_fn, FnRetryPolicy, RetryContext, RetryDecision, RetryPolicy, Retryer};

pub use async_trait::async_trait;
pub use bytes::Bytes;
pub use erased_serde;
pub use http;
