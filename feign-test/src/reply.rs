//! What a recording server answers: a response, after an optional delay, or a failure.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde::Serialize;

use crate::shown::BodyShown;

/// An answer a recording server gives: a status, headers and a body, or a [`Fault`]; either
/// after an optional [`delay`](Reply::delay).
///
/// The builders never panic: a status out of range, a header that cannot be sent or a value
/// that cannot be written as JSON makes the reply invalid. The server answers an invalid reply
/// with 500 and a body naming what was wrong, and [`verify`](crate::RecordingServer::verify)
/// fails with the same words.
///
/// ```
/// use std::time::Duration;
/// use feign_test::{Fault, Reply};
///
/// let created = Reply::status(201)
///     .header("location", "/orders/42")
///     .json(&serde_json::json!({ "id": 42 }));
/// let slow = Reply::ok().text("late").delay(Duration::from_millis(300));
/// let cut = Reply::fault(Fault::CloseBeforeAnswer);
/// # let _ = (created, slow, cut);
/// ```
#[derive(Clone)]
pub struct Reply {
    pub(crate) answer: Answer,
    pub(crate) delay: Duration,
}

/// The part of a [`Reply`] after its delay.
#[derive(Clone)]
pub(crate) enum Answer {
    /// An HTTP response.
    Respond {
        status: StatusCode,
        headers: HeaderMap,
        body: Bytes,
    },
    /// A failure of the connection.
    Fault(Fault),
    /// What was wrong with the reply as it was built.
    Invalid(String),
}

/// A way for a server to fail a request instead of answering it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The connection is closed (a FIN) once the request has arrived: nothing is written.
    CloseBeforeAnswer,
    /// The connection is reset (an RST) once the request has arrived.
    Reset,
    /// The request is never answered; the connection stays open until the server stops.
    Hang,
    /// These bytes are written as they are in place of a response, then the connection is
    /// closed: for answers no HTTP library would send.
    Raw(Bytes),
}

impl Reply {
    /// An empty response with this status (100 to 999).
    pub fn status(status: u16) -> Reply {
        let answer = match StatusCode::from_u16(status) {
            Ok(status) => Answer::Respond {
                status,
                headers: HeaderMap::new(),
                body: Bytes::new(),
            },
            Err(_) => Answer::Invalid(format!("status {status} is not between 100 and 999")),
        };
        Reply {
            answer,
            delay: Duration::ZERO,
        }
    }

    /// An empty 200 response.
    pub fn ok() -> Reply {
        Reply::status(200)
    }

    /// A failure in place of a response.
    pub fn fault(fault: Fault) -> Reply {
        Reply {
            answer: Answer::Fault(fault),
            delay: Duration::ZERO,
        }
    }

    /// `bytes` written as they are in place of a response, then the connection closed: a
    /// malformed response ([`Fault::Raw`]).
    pub fn raw(bytes: impl Into<Bytes>) -> Reply {
        Reply::fault(Fault::Raw(bytes.into()))
    }

    /// A response as an `http` crate response: its status, headers and body.
    pub fn from_http(response: http::Response<Bytes>) -> Reply {
        let (parts, body) = response.into_parts();
        Reply {
            answer: Answer::Respond {
                status: parts.status,
                headers: parts.headers,
                body,
            },
            delay: Duration::ZERO,
        }
    }

    /// Adds a header (`name: value`; a name may repeat).
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        let parsed = HeaderName::try_from(name)
            .map_err(|e| format!("header name {name:?} cannot be sent: {e}"))
            .and_then(|name| match HeaderValue::try_from(value) {
                Ok(value) => Ok((name, value)),
                Err(e) => Err(format!("header {name} value {value:?} cannot be sent: {e}")),
            });
        match parsed {
            Ok((name, value)) => {
                self.with_headers(|headers| {
                    headers.append(name, value);
                });
                self
            }
            Err(reason) => self.invalid(reason),
        }
    }

    /// Sets the body to these bytes.
    pub fn body(mut self, body: impl Into<Bytes>) -> Reply {
        if let Answer::Respond { body: kept, .. } = &mut self.answer {
            *kept = body.into();
        }
        self
    }

    /// Sets the body to `text`, as `text/plain; charset=utf-8` unless a content type is set.
    pub fn text(self, text: impl Into<String>) -> Reply {
        self.body(text.into())
            .content_type("text/plain; charset=utf-8")
    }

    /// Sets the body to `value` as JSON, as `application/json` unless a content type is set.
    pub fn json<T: Serialize + ?Sized>(self, value: &T) -> Reply {
        match serde_json::to_vec(value) {
            Ok(json) => self.body(json).content_type("application/json"),
            Err(e) => self.invalid(format!("the JSON body cannot be written: {e}")),
        }
    }

    /// Waits this long after the request arrived before answering (or failing).
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// The reason this reply cannot be sent, if it cannot.
    pub fn invalid_reason(&self) -> Option<&str> {
        match &self.answer {
            Answer::Invalid(reason) => Some(reason),
            _ => None,
        }
    }

    fn content_type(mut self, value: &'static str) -> Reply {
        self.with_headers(|headers| {
            headers
                .entry(CONTENT_TYPE)
                .or_insert(HeaderValue::from_static(value));
        });
        self
    }

    fn with_headers(&mut self, change: impl FnOnce(&mut HeaderMap)) {
        if let Answer::Respond { headers, .. } = &mut self.answer {
            change(headers);
        }
    }

    /// Makes the reply invalid for `reason`, unless it already was for another.
    fn invalid(mut self, reason: String) -> Reply {
        if !matches!(self.answer, Answer::Invalid(_)) {
            self.answer = Answer::Invalid(reason);
        }
        self
    }
}

impl fmt::Debug for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = f.debug_struct("Reply");
        match &self.answer {
            Answer::Respond {
                status,
                headers,
                body,
            } => shown
                .field("status", &status.as_u16())
                .field("headers", &feign_core::redact::headers(headers))
                .field("body", &BodyShown(body)),
            Answer::Fault(fault) => shown.field("fault", fault),
            Answer::Invalid(reason) => shown.field("invalid", reason),
        };
        shown.field("delay", &self.delay).finish()
    }
}
