//! What a client does under the layers, from the checked request to the answer: its target,
//! transport, limits, compression, response interceptors, error decoder, retry policy and
//! hedging; and the one rule that says which responses answer a call.

use std::sync::Arc;

use http::{HeaderValue, StatusCode};

use super::receive::Receive;
use crate::client::Transport;
use crate::hedging::Hedging;
use crate::interceptor::ResponseInterceptor;
use crate::meta::ClientMeta;
use crate::options::{LogLevel, Options};
use crate::resolve::Resolver;
use crate::retry::RetryPolicy;
use crate::Error;
use crate::ErrorDecoder;

/// A built client's settings under the layers. Shared by the calls and, through
/// [`CallRequest`](super::CallRequest), by the layers' innermost service.
pub(crate) struct Exchange {
    pub(crate) client_meta: &'static ClientMeta,
    pub(crate) target: Target,
    /// Run over every attempt's response, in order, before the status is judged.
    pub(crate) response_interceptors: Box<[Arc<dyn ResponseInterceptor>]>,
    pub(crate) compression: Compression,
    pub(crate) error_decoder: Arc<dyn ErrorDecoder>,
    pub(crate) retry: Arc<dyn RetryPolicy>,
    /// Hedged requests; `None`: off.
    pub(crate) hedging: Option<Hedging>,
    pub(crate) client: Transport,
    pub(crate) options: Options,
    pub(crate) log_level: LogLevel,
    pub(crate) limits: Limits,
    /// A 404 goes to the decoder rather than the error decoder.
    pub(crate) dismiss_404: bool,
}

/// Where calls go.
pub(crate) enum Target {
    /// A fixed base URL (userinfo removed) and the `Authorization` its userinfo stood for.
    Fixed {
        base: Arc<str>,
        authorization: Option<HeaderValue>,
    },
    /// An instance chosen per attempt.
    Resolver(Arc<dyn Resolver>),
}

/// Size limits checked on every call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) response_bytes: usize,
    pub(crate) request_target: usize,
    pub(crate) header_bytes: usize,
}

/// What is gzipped on the wire.
#[derive(Debug, Clone, Default)]
pub(crate) struct Compression {
    /// Request bodies to compress; `None`: none.
    pub(crate) request: Option<crate::compression::RequestCompression>,
    /// Ask for gzip responses and decode those the transport left compressed.
    pub(crate) response: bool,
}

/// What a call takes as an answer besides a 2xx, by its method's return type.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expect {
    /// A 404 is an answer (`Option` return types).
    pub(crate) not_found: bool,
}

impl Exchange {
    /// `response` when it answers the call: a 2xx, or a 404 that the method's `Option` or the
    /// client's `decode404` takes as an answer. Any other status becomes the error decoder's
    /// error. The one status rule, for an attempt's response and for one a layer made.
    pub(crate) fn settle<R: Receive>(
        &self,
        response: R,
        expect: Expect,
        key: &'static str,
    ) -> Result<R, Error> {
        let status = response.status();
        if status.is_success()
            || status == StatusCode::NOT_FOUND && (expect.not_found || self.dismiss_404)
        {
            return Ok(response);
        }
        match response.into_whole() {
            Ok(whole) => Err(self.error_decoder.decode(key, whole).with_method_key(key)),
            // Never a non-2xx: those are always read whole.
            Err(streaming) => Ok(streaming),
        }
    }
}
