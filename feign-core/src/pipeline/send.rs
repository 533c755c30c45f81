//! One attempt: its instance (the fixed URL or the resolver's pick), the transport, and the
//! response's body, read whole within the cap or left streaming.

use tokio::time::Instant;

use super::body::{self, OverLimit};
use super::exchange::{Exchange, Target};
use super::observe::CallObservation;
use super::receive::Receive;
use super::upload;
use crate::attempt::{Attempt, Attempts};
use crate::body::RequestBody;
use crate::call_info::CallInfo;
use crate::client::SendOptions;
use crate::options::Options;
use crate::resolve::AttemptOutcome;
use crate::RequestTemplate;
use crate::{log, Error, Response};

/// What the attempts of one call send with: the client's exchange, the checked request, the
/// call's options and its observation.
pub(super) struct Sending<'a> {
    pub(super) exchange: &'a Exchange,
    pub(super) template: &'a RequestTemplate,
    pub(super) options: Options,
    pub(super) observation: &'a CallObservation,
}

impl Sending<'_> {
    /// The next attempt: to the fixed URL, or to the instance the resolver picks.
    pub(super) fn next(
        &self,
        call: CallInfo<'_>,
        attempts: &mut Attempts,
    ) -> Result<Attempt, Error> {
        match &self.exchange.target {
            Target::Fixed {
                base,
                authorization,
            } => Ok(attempts.fixed(base, authorization.as_ref())),
            Target::Resolver(resolver) => {
                attempts.choose(&**resolver, call, &self.template.headers)
            }
        }
    }

    /// Sends `attempt` and reports how it ended to the balancer (as discarded when the future
    /// is dropped first); returns the URL it went to when it was a valid one.
    pub(super) async fn send_to<R: Receive>(
        &self,
        attempt: Attempt,
        number: u32,
    ) -> (Result<R, Error>, Option<http::Uri>) {
        // Parsing the owned string reuses its buffer; the URI is kept (a cheap clone) to name
        // the URL in errors.
        let (result, uri) = match http::Uri::try_from(attempt.url(&self.template.path_and_query)) {
            Ok(uri) => {
                self.observation
                    .on_attempt(number, attempt.instance_id().map(|id| &**id), &uri);
                (self.send::<R>(uri.clone(), &attempt).await, Some(uri))
            }
            Err(e) => (
                Err(Error::request("invalid request url").with_source(e)),
                None,
            ),
        };
        match &result {
            Ok(response) => {
                self.observation.on_response(response.status());
                attempt.finish(&AttemptOutcome::Response(response.status()));
            }
            Err(error) => attempt.finish(&AttemptOutcome::Failed(error)),
        }
        (result, uri)
    }

    /// Sends one attempt; a 2xx body is read whole or left streaming as `R` wants, any other
    /// is read whole (within the cap, of which the ErrorDecoder sees a preview).
    async fn send<R: Receive>(&self, uri: http::Uri, attempt: &Attempt) -> Result<R, Error> {
        let exchange = self.exchange;
        let template = self.template;
        let key = template.meta.key;
        let body = match &template.stream {
            None => RequestBody::from(template.body.clone()),
            Some(stream) => stream.next_attempt().ok_or_else(|| {
                Error::new(
                    crate::error::Kind::Transport,
                    "the streamed request body was read by an earlier attempt; it is not sent again",
                )
            })?,
        };
        let mut request = http::Request::new(body);
        *request.method_mut() = template.method.clone();
        *request.uri_mut() = uri;
        *request.headers_mut() = template.headers.clone();
        attempt.authorize(request.headers_mut());
        log::request(
            exchange.log_level,
            key,
            &template.method,
            request.uri(),
            request.headers(),
            &template.body,
            template.stream.as_ref().map(|stream| stream.length()),
        );
        let started = Instant::now();
        let send_options = SendOptions {
            connect_timeout: self.options.get_connect_timeout(),
            follow_redirects: self.options.get_follow_redirects(),
        };
        let read_timeout = self.options.get_read_timeout();
        let sending = exchange.client.send(request, &send_options);
        let sent = match template.stream.as_deref() {
            None => tokio::time::timeout(read_timeout, sending).await,
            // Boxed: a streamed call is rare, and the common call's future stays small.
            Some(stream) => {
                Box::pin(upload::within_read_timeout(sending, stream, read_timeout)).await
            }
        };
        let response = match sent {
            Ok(Ok(response)) => response,
            Ok(Err(error)) => {
                let error = match template.stream.as_deref() {
                    Some(stream) => upload::explain(stream, error),
                    None => error,
                };
                return Err(self.failed(error, started));
            }
            Err(_) => {
                return Err(self.failed(
                    Error::timeout(format!("no response within {read_timeout:?}")),
                    started,
                ))
            }
        };
        if let Some(error) = template.stream.as_deref().and_then(upload::failed) {
            return Err(self.failed(error, started));
        }
        let (parts, response_body) = response.into_parts();
        let (parts, response_body) = if parts.status.is_success() {
            match R::stream(parts, response_body, read_timeout, key) {
                Ok(streaming) => {
                    log::response_head(
                        exchange.log_level,
                        key,
                        streaming.status(),
                        started.elapsed(),
                        streaming.headers(),
                    );
                    return Ok(streaming);
                }
                Err(whole) => whole,
            }
        } else {
            (parts, response_body)
        };
        let over_limit = if parts.status.is_success() {
            OverLimit::Fail
        } else {
            OverLimit::Truncate
        };
        let body = body::read(
            response_body,
            &parts.headers,
            exchange.limits.response_bytes,
            over_limit,
            read_timeout,
        )
        .await
        .map_err(|e| self.failed(e, started))?;
        let mut headers = parts.headers;
        let body = if exchange.compression.response {
            crate::compression::gunzip_response(
                &mut headers,
                body,
                exchange.limits.response_bytes,
                over_limit == OverLimit::Truncate,
            )
            .map_err(|e| self.failed(e, started))?
        } else {
            body
        };
        log::response(
            exchange.log_level,
            key,
            parts.status,
            started.elapsed(),
            &headers,
            &body,
        );
        Ok(R::whole(Response::new(parts.status, headers, body)))
    }

    fn failed(&self, error: Error, started: Instant) -> Error {
        log::failure(
            self.exchange.log_level,
            self.template.meta.key,
            &error,
            started.elapsed(),
        );
        error
    }
}
