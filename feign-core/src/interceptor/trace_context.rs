//! W3C Trace Context (`traceparent`, `tracestate`): the value, its parsing and formatting, and
//! the task-local slot the ready propagator reads it from.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use http::HeaderMap;

use crate::Error;

/// The `traceparent` header.
pub const TRACEPARENT: &str = "traceparent";
/// The `tracestate` header.
pub const TRACESTATE: &str = "tracestate";

/// Longest `tracestate` kept: 32 members of at most 256 characters plus separators, the W3C
/// limit on what a vendor must propagate is 512 characters; more is dropped, not truncated.
const MAX_TRACESTATE: usize = 512;

tokio::task_local! {
    static CURRENT: TraceContext;
}

/// A W3C trace context: a trace id, the id of the span that is the parent of the next hop, the
/// trace flags and an optional `tracestate`.
///
/// Ids are never all zero, and they are written as lower-case hex, as the W3C Trace Context
/// recommendation requires:
///
/// ```
/// use feign_core::interceptor::TraceContext;
///
/// let parent = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None)?;
/// assert!(parent.is_sampled());
/// let hop = parent.child();
/// assert_eq!(hop.trace_id(), parent.trace_id());
/// assert_ne!(hop.span_id(), parent.span_id());
/// assert!(TraceContext::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None).is_err());
/// # Ok::<(), feign_core::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: u128,
    span_id: u64,
    flags: u8,
    state: Option<Arc<str>>,
}

impl TraceContext {
    /// The `sampled` trace flag.
    pub const SAMPLED: u8 = 0x01;

    /// A context of the given ids and flags; an all-zero id is an error.
    pub fn new(trace_id: u128, span_id: u64, flags: u8) -> Result<Self, Error> {
        if trace_id == 0 || span_id == 0 {
            return Err(Error::request("trace and span ids must not be all zero"));
        }
        Ok(TraceContext {
            trace_id,
            span_id,
            flags,
            state: None,
        })
    }

    /// The root of a new trace: random ids, sampled or not.
    pub fn new_root(sampled: bool) -> Self {
        TraceContext {
            trace_id: nonzero_u128(),
            span_id: nonzero_u64(),
            flags: if sampled { Self::SAMPLED } else { 0 },
            state: None,
        }
    }

    /// The context to send to the next hop: the same trace, flags and state, a new random span id.
    pub fn child(&self) -> Self {
        TraceContext {
            span_id: nonzero_u64(),
            ..self.clone()
        }
    }

    /// Parses a `traceparent` value, and a `tracestate` value when there is one.
    ///
    /// Version `00` must have exactly four fields; a later version may add fields after them
    /// (they are ignored, as the recommendation says); version `ff`, upper-case hex and all-zero
    /// ids are errors. An over-long `tracestate` is dropped.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Result<Self, Error> {
        let invalid = || Error::request("invalid traceparent");
        let value = traceparent.trim_matches([' ', '\t']);
        let mut fields = value.split('-');
        let (Some(version), Some(trace_id), Some(span_id), Some(flags)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(invalid());
        };
        if !is_hex(version, 2) || version == "ff" {
            return Err(invalid());
        }
        if version == "00" && fields.next().is_some() {
            return Err(invalid());
        }
        if !is_hex(trace_id, 32) || !is_hex(span_id, 16) || !is_hex(flags, 2) {
            return Err(invalid());
        }
        let parse = |s: &str| u128::from_str_radix(s, 16).map_err(|_| invalid());
        let mut context = TraceContext::new(
            parse(trace_id)?,
            u64::try_from(parse(span_id)?).map_err(|_| invalid())?,
            u8::try_from(parse(flags)?).map_err(|_| invalid())?,
        )
        .map_err(|_| invalid())?;
        context.state = tracestate.and_then(usable_state).map(Arc::from);
        Ok(context)
    }

    /// The context a request's `traceparent` and `tracestate` headers carry, for a server to
    /// continue the caller's trace; `None` when absent or invalid.
    pub fn from_headers(headers: &HeaderMap) -> Option<Self> {
        let parent = headers.get(TRACEPARENT)?.to_str().ok()?;
        let state = headers.get(TRACESTATE).and_then(|v| v.to_str().ok());
        TraceContext::parse(parent, state).ok()
    }

    /// The trace id.
    pub fn trace_id(&self) -> u128 {
        self.trace_id
    }

    /// The span id: the parent of whatever receives this context.
    pub fn span_id(&self) -> u64 {
        self.span_id
    }

    /// The trace flags.
    pub fn flags(&self) -> u8 {
        self.flags
    }

    /// Whether the `sampled` flag is set.
    pub fn is_sampled(&self) -> bool {
        self.flags & Self::SAMPLED != 0
    }

    /// The `tracestate` value, if any.
    pub fn trace_state(&self) -> Option<&str> {
        self.state.as_deref()
    }

    /// Sets the `tracestate` value; an empty, over-long or non-printable one is dropped.
    #[must_use]
    pub fn with_trace_state(mut self, state: &str) -> Self {
        self.state = usable_state(state).map(Arc::from);
        self
    }

    /// The trace id as 32 lower-case hex digits.
    pub fn trace_id_hex(&self) -> String {
        format!("{:032x}", self.trace_id)
    }

    /// The `traceparent` value: `00-<trace id>-<span id>-<flags>`, lower-case hex.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{:032x}-{:016x}-{:02x}",
            self.trace_id, self.span_id, self.flags
        )
    }

    /// Runs `future` with `self` as the current context: inside it, [`TraceContext::current`]
    /// returns it and [`W3cTraceparent`](crate::interceptor::W3cTraceparent) propagates it.
    ///
    /// A server calls this around a request's handling with the context of
    /// [`TraceContext::from_headers`], so calls made while handling continue the caller's trace.
    pub async fn scope<F: Future>(self, future: F) -> F::Output {
        CURRENT.scope(self, future).await
    }

    /// The context set by the enclosing [`TraceContext::scope`], if any.
    pub fn current() -> Option<Self> {
        CURRENT.try_with(Clone::clone).ok()
    }
}

impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceContext")
            .field("traceparent", &self.traceparent())
            .field("tracestate", &self.state)
            .finish()
    }
}

impl fmt::Display for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.traceparent())
    }
}

/// `state` without surrounding blanks, if it is printable ASCII of an acceptable length.
fn usable_state(state: &str) -> Option<&str> {
    let state = state.trim_matches([' ', '\t']);
    let usable = !state.is_empty()
        && state.len() <= MAX_TRACESTATE
        && state.bytes().all(|b| (0x20..0x7f).contains(&b));
    usable.then_some(state)
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn nonzero_u128() -> u128 {
    loop {
        let id: u128 = rand::random();
        if id != 0 {
            return id;
        }
    }
}

fn nonzero_u64() -> u64 {
    loop {
        let id: u64 = rand::random();
        if id != 0 {
            return id;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn parses_and_formats_the_w3c_example() {
        let context = TraceContext::parse(PARENT, Some("congo=t61rcWkgMzE")).unwrap();
        assert_eq!(context.trace_id(), 0x4bf92f3577b34da6a3ce929d0e0e4736);
        assert_eq!(context.span_id(), 0x00f067aa0ba902b7);
        assert!(context.is_sampled());
        assert_eq!(context.traceparent(), PARENT);
        assert_eq!(context.trace_state(), Some("congo=t61rcWkgMzE"));
    }

    #[test]
    fn refuses_malformed_values() {
        let bad = [
            "",
            "00",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
            "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ];
        for value in bad {
            assert!(TraceContext::parse(value, None).is_err(), "{value:?}");
        }
    }

    #[test]
    fn a_later_version_may_carry_more_fields() {
        let value = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes";
        let context = TraceContext::parse(value, None).unwrap();
        assert_eq!(context.traceparent(), PARENT);
    }

    #[test]
    fn unusable_tracestate_is_dropped() {
        let long = "a=".to_owned() + &"b".repeat(MAX_TRACESTATE);
        for state in ["", "  ", long.as_str(), "a=\u{7f}"] {
            let context = TraceContext::parse(PARENT, Some(state)).unwrap();
            assert_eq!(context.trace_state(), None, "{state:?}");
        }
    }

    #[test]
    fn roots_and_children_have_nonzero_ids() {
        let root = TraceContext::new_root(false);
        assert!(!root.is_sampled());
        let child = root.child();
        assert_eq!(child.trace_id(), root.trace_id());
        assert_ne!(child.span_id(), 0);
        let parsed = TraceContext::parse(&child.traceparent(), None).unwrap();
        assert_eq!(parsed, child);
    }

    #[tokio::test]
    async fn scope_sets_the_current_context() {
        assert_eq!(TraceContext::current(), None);
        let context = TraceContext::parse(PARENT, None).unwrap();
        let seen = context
            .clone()
            .scope(async { TraceContext::current() })
            .await;
        assert_eq!(seen, Some(context));
    }
}
