//! One call through the balancer, whatever sends its attempts: which host is a service, where
//! each attempt goes, how it is reported, and whether it is retried.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use feign_core::attempt::{Attempt, Attempts};
use feign_core::resolve::{AttemptOutcome, CallInfo, Resolver as _};
use feign_core::retry::{RetryDecision, RetryPolicy};
use feign_core::Error;
use http::{HeaderMap, Method, StatusCode};

use crate::LoadBalancer;

/// The service a request names: its host, when it has no port and is not an IP address.
pub(crate) fn service_name(host: Option<&str>, port: Option<u16>) -> Option<&str> {
    let host = host.filter(|h| !h.is_empty())?;
    if port.is_some() || host.starts_with('[') || host.parse::<IpAddr>().is_ok() {
        return None;
    }
    Some(host)
}

/// How an attempt ended, as far as retrying it goes.
pub(crate) enum Ended<'a> {
    /// A response arrived with this status and these headers.
    Response(StatusCode, &'a HeaderMap),
    /// The connection could not be made: nothing was sent.
    Connect,
    /// The transport timed out.
    Timeout,
    /// The transport failed after the request may have been sent.
    Transport,
}

/// What the caller does after an attempt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Send the request again, to the instance the next [`Call::choose`] picks, after `delay`.
    Retry(Duration),
    /// Hand the last attempt's result to the caller.
    Done,
}

/// The attempts of one request to a service.
pub(crate) struct Call {
    lb: LoadBalancer,
    service: Box<str>,
    method: Method,
    idempotent: bool,
    policy: Option<Arc<dyn RetryPolicy>>,
    attempts: Attempts,
}

impl Call {
    /// A call of `method` to `service`; counts it for the retry budget.
    pub(crate) fn start(
        lb: &LoadBalancer,
        service: &str,
        method: &Method,
        headers: &HeaderMap,
    ) -> Call {
        let policy = lb.retry_policy(service);
        if let Some(policy) = &policy {
            policy.on_call();
        }
        let idempotent = CallInfo::new(service, "", method)
            .with_idempotency_key(headers)
            .idempotent;
        Call {
            lb: lb.clone(),
            service: service.into(),
            method: method.clone(),
            idempotent,
            policy,
            attempts: Attempts::new(),
        }
    }

    /// Picks the instance of the next attempt; `headers` are the request's (hints, sticky
    /// cookies). The error names the service and why no instance could be had.
    pub(crate) fn choose(&mut self, headers: &HeaderMap) -> Result<Attempt, Error> {
        let call = info(&self.service, &self.method, self.idempotent);
        self.attempts.choose(&self.lb, call, headers)
    }

    /// Reports how `attempt` ended and decides what comes next; `replayable` says whether the
    /// request can be sent again.
    pub(crate) fn ended(&mut self, attempt: Attempt, ended: Ended<'_>, replayable: bool) -> Next {
        let error = match ended {
            Ended::Response(status, headers) => {
                attempt.finish(&AttemptOutcome::Response(status));
                if status.is_success() {
                    return Next::Done;
                }
                Error::status_error(status, headers.clone(), bytes::Bytes::new())
            }
            Ended::Connect => failed(attempt, Error::connect("connection failed")),
            Ended::Timeout => failed(attempt, Error::timeout("the transport timed out")),
            Ended::Transport => failed(attempt, Error::transport("the transport failed")),
        };
        let Some(policy) = self.policy.clone().filter(|_| replayable) else {
            return Next::Done;
        };
        let call = info(&self.service, &self.method, self.idempotent);
        match self.attempts.decide(&*policy, call, &error, None) {
            RetryDecision::Retry { delay, .. } => {
                tracing::debug!(
                    service = &*self.service,
                    attempt = self.attempts.made(),
                    ?delay,
                    "retrying the request"
                );
                Next::Retry(delay)
            }
            _ => Next::Done,
        }
    }
}

/// What every attempt of a call of `method` to `service` shares; its method key is the HTTP
/// method's name, since a plain request has no client method.
fn info<'a>(service: &'a str, method: &'a Method, idempotent: bool) -> CallInfo<'a> {
    CallInfo::new(service, method.as_str(), method).with_idempotent(idempotent)
}

/// Reports `attempt` as failed with `error`, and gives the error back.
fn failed(attempt: Attempt, error: Error) -> Error {
    attempt.finish(&AttemptOutcome::Failed(&error));
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_without_port_is_a_service_and_addresses_pass_through() {
        assert_eq!(
            service_name(Some("order-service"), None),
            Some("order-service")
        );
        assert_eq!(service_name(Some("order-service"), Some(8080)), None);
        assert_eq!(service_name(Some("127.0.0.1"), None), None);
        assert_eq!(service_name(Some("[::1]"), None), None);
        assert_eq!(service_name(None, None), None);
    }
}
