//! One call through the balancer, whatever sends its attempts: which host is a service, where
//! each attempt goes, how it is reported, and whether it is retried.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use feign_core::{
    AttemptOutcome, CallInfo, ChooseRequest, Chosen, Error, Resolver, RetryContext, RetryDecision,
    RetryPolicy,
};
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use tokio::time::Instant;

use crate::LoadBalancer;

/// The header that makes any method idempotent, as for feign clients.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

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

/// The instance one attempt goes to, reported to the balancer exactly once: when the attempt
/// ends, or as discarded when it is dropped unfinished.
pub(crate) struct Attempt {
    chosen: Option<(Chosen, Instant)>,
    /// The instance's URL without userinfo or trailing `/`.
    base: String,
    /// The instance URL's credentials as a Basic `Authorization` value.
    authorization: Option<HeaderValue>,
}

impl Attempt {
    /// The URL of `path_and_query` (empty for `/`) on the chosen instance.
    pub(crate) fn url(&self, path_and_query: &str) -> String {
        let path = if path_and_query.is_empty() {
            "/"
        } else {
            path_and_query
        };
        format!("{}{path}", self.base)
    }

    /// Adds the instance's credentials unless the request carries its own.
    pub(crate) fn authorize(&self, headers: &mut HeaderMap) {
        if let Some(value) = &self.authorization {
            headers
                .entry(AUTHORIZATION)
                .or_insert_with(|| value.clone());
        }
    }

    fn report(&mut self, outcome: &AttemptOutcome<'_>) {
        if let Some((chosen, started)) = self.chosen.take() {
            let ended = Instant::now();
            chosen.complete_at(outcome, ended.saturating_duration_since(started), ended);
        }
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        self.report(&AttemptOutcome::Discarded);
    }
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
    tried: Vec<Arc<str>>,
    same_instance: Option<Arc<str>>,
    started: Instant,
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
        let idempotent =
            CallInfo::new(service, "", method).idempotent || headers.contains_key(IDEMPOTENCY_KEY);
        Call {
            lb: lb.clone(),
            service: service.into(),
            method: method.clone(),
            idempotent,
            policy,
            tried: Vec::new(),
            same_instance: None,
            started: Instant::now(),
        }
    }

    fn info(&self) -> CallInfo<'_> {
        CallInfo::new(&self.service, self.method.as_str(), &self.method)
            .with_idempotent(self.idempotent)
    }

    /// Picks the instance of the next attempt; `headers` are the request's (hints, sticky
    /// cookies). The error names the service and why no instance could be had.
    pub(crate) fn choose(&mut self, headers: &HeaderMap) -> Result<Attempt, Error> {
        let mut request = ChooseRequest::new(&self.service, "", &self.method, headers);
        request.call = self.info();
        request.attempt = self.tried.len() as u32 + 1;
        request.tried = &self.tried;
        request.same_instance = self.same_instance.as_deref();
        let chosen = self.lb.choose(&request)?;
        self.tried.push(chosen.instance_id().clone());
        let (base, credentials) = feign_core::split_userinfo(chosen.base_url());
        let base = base.trim_end_matches('/').to_owned();
        Ok(Attempt {
            authorization: credentials.and_then(|c| c.basic_authorization()),
            base,
            chosen: Some((chosen, Instant::now())),
        })
    }

    /// Reports how `attempt` ended and decides what comes next; `replayable` says whether the
    /// request can be sent again.
    pub(crate) fn ended(
        &mut self,
        mut attempt: Attempt,
        ended: Ended<'_>,
        replayable: bool,
    ) -> Next {
        let error = match ended {
            Ended::Response(status, headers) => {
                attempt.report(&AttemptOutcome::Response(status));
                if status.is_success() {
                    return Next::Done;
                }
                Error::status_error(status, headers.clone(), bytes::Bytes::new())
            }
            Ended::Connect => Error::connect("connection failed"),
            Ended::Timeout => Error::timeout("the transport timed out"),
            Ended::Transport => Error::transport("the transport failed"),
        };
        if !matches!(ended, Ended::Response(..)) {
            attempt.report(&AttemptOutcome::Failed(&error));
        }
        let Some(policy) = self.policy.as_ref().filter(|_| replayable) else {
            return Next::Done;
        };
        let attempts = self.tried.len() as u32;
        let ctx = RetryContext::new(self.info(), attempts, &error, self.started.elapsed(), None);
        match policy.decide(&ctx) {
            RetryDecision::Retry {
                delay,
                same_instance,
            } => {
                self.same_instance = same_instance.then(|| self.tried.last().cloned()).flatten();
                tracing::debug!(
                    service = &*self.service,
                    attempt = attempts,
                    ?delay,
                    "retrying the request"
                );
                Next::Retry(delay)
            }
            _ => Next::Done,
        }
    }
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
