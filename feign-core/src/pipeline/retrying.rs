//! The call under the layers: the request checked and compressed once, then sent attempt after
//! attempt, within the total timeout, until a response answers it or the retry policy stops.

use tokio::time::Instant;

use super::exchange::{Exchange, Expect};
use super::observe::CallObservation;
use super::receive::Receive;
use super::send::Sending;
use crate::attempt::Attempts;
use crate::call_info::CallInfo;
use crate::interceptor::ResponseContext;
use crate::retry::RetryDecision;
use crate::RequestTemplate;
use crate::{log, Error, Response};

/// Runs the call of `template` on `exchange`: an answer (see [`Exchange::settle`]), or the error
/// of its last attempt. `observation` hears of each attempt.
pub(crate) async fn run<R: Receive>(
    exchange: &Exchange,
    mut template: RequestTemplate,
    expect: Expect,
    observation: &CallObservation,
) -> Result<R, Error> {
    let meta = template.meta;
    let checked = crate::headers::check_all(&template.headers)
        .and_then(|()| check_limits(exchange, &template))
        .and_then(|()| prepare_body(exchange, &mut template));
    checked.map_err(|e| e.with_method_key(meta.key))?;
    let sending = Sending {
        exchange,
        template: &template,
        options: exchange.options.with_method(&meta.options),
        observation,
    };
    match sending.options.get_total_timeout() {
        None => attempts(&sending, expect, None).await,
        Some(total) => {
            let deadline = Instant::now() + total;
            match tokio::time::timeout_at(deadline, attempts(&sending, expect, Some(deadline)))
                .await
            {
                Ok(result) => result,
                Err(_) => Err(Error::timeout(format!(
                    "call exceeded its total timeout of {total:?}"
                ))
                .with_method_key(meta.key)),
            }
        }
    }
}

/// Compression, once per call: a buffered body gzipped when the settings call for it (a
/// streamed one goes as it is), and gzip asked for in responses.
fn prepare_body(exchange: &Exchange, template: &mut RequestTemplate) -> Result<(), Error> {
    if let Some(settings) = exchange
        .compression
        .request
        .as_ref()
        .filter(|_| template.stream.is_none())
    {
        settings.apply(&mut template.headers, &mut template.body)?;
    }
    if exchange.compression.response {
        crate::compression::accept_gzip(&mut template.headers);
    }
    Ok(())
}

fn check_limits(exchange: &Exchange, template: &RequestTemplate) -> Result<(), Error> {
    let limits = exchange.limits;
    if template.path_and_query.len() > limits.request_target {
        return Err(Error::request(format!(
            "request target of {} bytes is over the {}-byte limit",
            template.path_and_query.len(),
            limits.request_target
        )));
    }
    let header_bytes: usize = template
        .headers
        .iter()
        .map(|(n, v)| n.as_str().len() + v.len() + 4)
        .sum();
    if header_bytes > limits.header_bytes {
        return Err(Error::request(format!(
            "headers of {header_bytes} bytes are over the {}-byte limit",
            limits.header_bytes
        )));
    }
    Ok(())
}

/// What each attempt of the call shares. Idempotent by method or `#[idempotent]`, or made so
/// by an `Idempotency-Key` header.
fn call_info<'a>(exchange: &'a Exchange, template: &'a RequestTemplate) -> CallInfo<'a> {
    let meta = template.meta;
    let call = CallInfo::new(exchange.client_meta.service, meta.key, &template.method);
    let by_method = if template.method == meta.method.as_http() {
        meta.idempotent
    } else {
        call.idempotent
    };
    call.with_idempotent(by_method)
        .with_idempotency_key(&template.headers)
}

/// Attempts until one answers or the retry policy stops; `deadline`: the total timeout's.
async fn attempts<R: Receive>(
    sending: &Sending<'_>,
    expect: Expect,
    deadline: Option<Instant>,
) -> Result<R, Error> {
    let exchange = sending.exchange;
    let template = sending.template;
    let key = template.meta.key;
    let call = call_info(exchange, template);
    exchange.retry.on_call();
    let mut attempts = Attempts::new();
    loop {
        let (result, url) = match &exchange.hedging {
            // Boxed: only hedged calls carry the state of several attempts at once.
            Some(hedging) if attempts.made() == 0 && sending.hedgeable(call) => {
                Box::pin(sending.hedged::<R>(call, hedging, &mut attempts)).await
            }
            _ => match sending.next(call, &mut attempts) {
                Ok(attempt) => sending.send_to::<R>(attempt, attempts.made()).await,
                Err(e) => (Err(e), None),
            },
        };
        let result = match result {
            // Boxed: calls without response interceptors do not carry its state. A body left
            // streaming is not in memory for them to see.
            Ok(response) if !exchange.response_interceptors.is_empty() => {
                match response.into_whole() {
                    Ok(whole) => Box::pin(intercept_response(sending, whole, attempts.made()))
                        .await
                        .map(R::whole),
                    Err(streaming) => Ok(streaming),
                }
            }
            other => other,
        };
        let error = match result.and_then(|response| exchange.settle(response, expect, key)) {
            Ok(answer) => return Ok(answer),
            Err(error) => error,
        };
        let mut error = error.with_method_key(key);
        if let Some(url) = &url {
            error = error.with_url(&url.to_string());
        }
        let now = Instant::now();
        // A streamed body that has started to go out cannot be sent again.
        let decision = if template.stream.as_ref().is_some_and(|s| s.started()) {
            RetryDecision::Stop
        } else {
            let remaining = deadline.map(|d| d.saturating_duration_since(now));
            attempts.decide(&*exchange.retry, call, &error, remaining)
        };
        match decision {
            RetryDecision::Retry { delay, .. } if deadline.is_none_or(|d| now + delay < d) => {
                log::retry(exchange.log_level, key, attempts.made(), delay);
                sending.observation.on_retry();
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
            }
            RetryDecision::BudgetExhausted => return Err(error.with_retry_budget_exhausted()),
            _ => return Err(error),
        }
    }
}

/// The response interceptors, in order, over an attempt's response.
async fn intercept_response(
    sending: &Sending<'_>,
    mut response: Response,
    attempt: u32,
) -> Result<Response, Error> {
    let context = ResponseContext {
        request: sending.template,
        attempt,
    };
    for interceptor in &sending.exchange.response_interceptors {
        response = interceptor.intercept(response, &context).await?;
    }
    Ok(response)
}
