//! feign-core: the runtime behind `#[feign_client]`.
//!
//! (Crate docs: see the end of this file.)

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
pub use resolve::{AttemptOutcome, CallObserver, ChooseRequest, Chosen, Resolver};
pub use response::Response;
pub use retry::{retry_fn, FnRetryPolicy, RetryContext, RetryDecision, RetryPolicy, Retryer};

pub use async_trait::async_trait;
pub use bytes::Bytes;
pub use erased_serde;
pub use http;
