//! Expectations: how many requests of a kind a test expects, checked by `verify`.

use std::fmt;
use std::sync::Mutex;

use crate::matcher::Matcher;
use crate::report;
use crate::request::RecordedRequest;
use crate::sync::lock;

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
struct Expected {
    matcher: Matcher,
    count: Count,
}

/// A server's expectations, in the order they were added.
#[derive(Default)]
pub(crate) struct Expectations(Mutex<Vec<Expected>>);

impl Expectations {
    /// Forgets every expectation.
    pub(crate) fn clear(&self) {
        lock(&self.0).clear();
    }
}

/// What a server found wrong on its own (invalid replies), for `verify` to report.
#[derive(Default)]
pub(crate) struct Problems(Mutex<Vec<String>>);

impl Problems {
    /// Notes a problem.
    pub(crate) fn note(&self, problem: String) {
        lock(&self.0).push(problem);
    }

    /// Forgets every problem.
    pub(crate) fn clear(&self) {
        lock(&self.0).clear();
    }
}

/// An expectation [`RecordingServer::expect`](crate::RecordingServer::expect) added: at least
/// one matching request unless one of these methods says otherwise.
/// [`verify`](crate::RecordingServer::verify) checks it.
pub struct Expectation<'a> {
    expectations: &'a Expectations,
    index: usize,
}

impl<'a> Expectation<'a> {
    /// Adds an expectation of at least one request matching `matcher`.
    pub(crate) fn add(expectations: &'a Expectations, matcher: Matcher) -> Self {
        let mut list = lock(&expectations.0);
        list.push(Expected {
            matcher,
            count: Count::AtLeast(1),
        });
        Expectation {
            expectations,
            index: list.len() - 1,
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
        if let Some(expected) = lock(&self.expectations.0).get_mut(self.index) {
            expected.count = count;
        }
    }
}

impl fmt::Debug for Expectation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = lock(&self.expectations.0);
        let mut shown = f.debug_struct("Expectation");
        if let Some(expected) = list.get(self.index) {
            shown
                .field("matcher", &expected.matcher.to_string())
                .field("count", &expected.count.to_string());
        }
        shown.finish()
    }
}

/// Every expectation not met and every problem noted, with what was received; `None` when
/// there is nothing to report.
pub(crate) fn failures(
    received: &[RecordedRequest],
    expectations: &Expectations,
    problems: &Problems,
) -> Option<String> {
    let mut failures: Vec<String> = lock(&expectations.0)
        .iter()
        .filter_map(|expected| unmet(expected, received))
        .collect();
    failures.extend(lock(&problems.0).iter().cloned());
    if failures.is_empty() {
        return None;
    }
    Some(format!(
        "feign-test: {}{}",
        failures.join("\n  "),
        report::listing(received, None)
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
