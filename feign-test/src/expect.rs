//! Expectations: how many requests of a kind a test expects, checked by `verify`.

use std::fmt;

use crate::matcher::Matcher;
use crate::report;
use crate::request::RecordedRequest;
use crate::state::{lock, State};

/// How many matching requests an expectation wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Count {
    Exactly(usize),
    AtLeast(usize),
}

impl Count {
    fn allows(self, received: usize) -> bool {
        match self {
            Count::Exactly(n) => received == n,
            Count::AtLeast(n) => received >= n,
        }
    }
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Count::Exactly(0) => f.write_str("never"),
            Count::Exactly(1) => f.write_str("exactly once"),
            Count::Exactly(n) => write!(f, "exactly {n} times"),
            Count::AtLeast(1) => f.write_str("at least once"),
            Count::AtLeast(n) => write!(f, "at least {n} times"),
        }
    }
}

/// One expectation as the server keeps it.
pub(crate) struct Expected {
    matcher: Matcher,
    count: Count,
}

/// An expectation [`RecordingServer::expect`](crate::RecordingServer::expect) added: at least
/// one matching request unless one of these methods says otherwise.
/// [`verify`](crate::RecordingServer::verify) checks it.
#[derive(Debug)]
pub struct Expectation<'a> {
    state: &'a State,
    index: usize,
}

impl<'a> Expectation<'a> {
    /// Adds an expectation of at least one request matching `matcher`.
    pub(crate) fn add(state: &'a State, matcher: Matcher) -> Self {
        let mut expectations = lock(&state.expectations);
        expectations.push(Expected {
            matcher,
            count: Count::AtLeast(1),
        });
        Expectation {
            state,
            index: expectations.len() - 1,
        }
    }

    /// Exactly `n` matching requests.
    pub fn times(self, n: usize) {
        self.set(Count::Exactly(n));
    }

    /// `n` matching requests or more.
    pub fn at_least(self, n: usize) {
        self.set(Count::AtLeast(n));
    }

    /// No matching request.
    pub fn never(self) {
        self.times(0);
    }

    fn set(self, count: Count) {
        if let Some(expected) = lock(&self.state.expectations).get_mut(self.index) {
            expected.count = count;
        }
    }
}

/// Every expectation not met and every problem noted, with what was received; `None` when
/// there is nothing to report.
pub(crate) fn failures(state: &State) -> Option<String> {
    let received = state.recording.all();
    let mut failures: Vec<String> = lock(&state.expectations)
        .iter()
        .filter_map(|expected| unmet(expected, &received))
        .collect();
    failures.extend(state.problems());
    if failures.is_empty() {
        return None;
    }
    Some(format!(
        "feign-test: {}{}",
        failures.join("\n  "),
        report::listing(&received, None)
    ))
}

fn unmet(expected: &Expected, received: &[RecordedRequest]) -> Option<String> {
    let matching = received
        .iter()
        .filter(|r| expected.matcher.matches(r))
        .count();
    (!expected.count.allows(matching)).then(|| {
        format!(
            "expected {} {}, received {matching}",
            expected.matcher, expected.count
        )
    })
}
