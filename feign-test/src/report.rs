//! What a failed assertion prints: every request received, secrets hidden.

use std::fmt::Write;

use crate::matcher::Matcher;
use crate::request::RecordedRequest;
use crate::shown::BodyShown;

/// The requests, numbered, each with its headers and body, and, given a matcher, why each one
/// does not match it. Starts with a line break.
pub(crate) fn listing(received: &[RecordedRequest], matcher: Option<&Matcher>) -> String {
    let mut text = match received.len() {
        0 => return "\nno request was received".to_owned(),
        1 => "\n1 request was received:".to_owned(),
        n => format!("\n{n} requests were received:"),
    };
    for (n, request) in received.iter().enumerate() {
        let _ = write!(
            text,
            "\n  {}. {request}\n     headers: {:?}\n     body: {:?}",
            n + 1,
            feign_core::redact::headers(&request.headers),
            BodyShown(&request.body),
        );
        if let Some(matcher) = matcher {
            let reasons = matcher.mismatches(request);
            if !reasons.is_empty() {
                let _ = write!(text, "\n     differs: {}", reasons.join("; "));
            }
        }
    }
    text
}
