//! One rule of a method's double: which calls it answers, how, and how many times.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use http::{HeaderMap, StatusCode};

use super::{Outcome, Signature};
use crate::Error;

/// Tells the calls a rule answers: `true` for those it answers.
pub(super) type Matcher<S> = Box<dyn for<'a> Fn(&<S as Signature>::Args<'a>) -> bool + Send + Sync>;

/// Makes a rule's answer from the call's arguments.
pub(super) type Answer<S> =
    Box<dyn for<'a> Fn(<S as Signature>::Args<'a>) -> <S as Signature>::Output + Send + Sync>;

/// A rule as stored: shared with the calls reading it, its uses counted.
pub(super) struct Rule<S: Signature> {
    matcher: Option<Matcher<S>>,
    answer: Answer<S>,
    /// The calls it may answer; `None`: any number.
    times: Option<usize>,
    used: AtomicUsize,
}

impl<S: Signature> Rule<S> {
    /// Whether the rule answers a call with `args`; its matcher runs with no lock held.
    pub(super) fn matches(&self, args: &S::Args<'_>) -> bool {
        self.matcher.as_ref().is_none_or(|matcher| matcher(args))
    }

    /// Takes one use of the rule; `false` when `times(n)` are spent (another call may have
    /// taken the last one since `matches`).
    pub(super) fn claim(&self) -> bool {
        match self.times {
            None => {
                self.used.fetch_add(1, Ordering::Relaxed);
                true
            }
            Some(times) => self
                .used
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                    (used < times).then_some(used + 1)
                })
                .is_ok(),
        }
    }

    /// The answer to a call it claimed.
    pub(super) fn answer(&self, args: S::Args<'_>) -> S::Output {
        (self.answer)(args)
    }

    /// `(times, used)` for a rule limited to `times` calls that answered fewer.
    pub(super) fn unmet(&self) -> Option<(usize, usize)> {
        let used = self.used.load(Ordering::Acquire);
        self.times
            .filter(|&times| used < times)
            .map(|times| (times, used))
    }

    /// The calls it answered.
    pub(super) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}

/// A method's rules, in the order they were added.
pub(super) struct RuleList<S: Signature>(Mutex<Vec<Arc<Rule<S>>>>);

impl<S: Signature> RuleList<S> {
    pub(super) fn new() -> Self {
        RuleList(Mutex::new(Vec::new()))
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Arc<Rule<S>>>> {
        // No user code runs under this lock, so a poisoned one still holds a consistent list.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, rule: Rule<S>) {
        self.lock().push(Arc::new(rule));
    }

    /// The rules as they are now, to be asked with no lock held.
    pub(super) fn snapshot(&self) -> Vec<Arc<Rule<S>>> {
        self.lock().clone()
    }

    pub(super) fn clear(&self) {
        self.lock().clear();
    }
}

/// A rule being written: set which calls it answers ([`when`](RuleBuilder::when)) and how
/// often ([`times`](RuleBuilder::times)), then end it with its answer
/// ([`returns`](RuleBuilder::returns), [`answers`](RuleBuilder::answers),
/// [`fails`](RuleBuilder::fails) or [`fails_with_status`](RuleBuilder::fails_with_status)),
/// which adds it after the method's other rules. A rule never ended is not added.
#[must_use = "a rule is added by its answer: end it with `returns`, `answers` or `fails`"]
pub struct RuleBuilder<'d, S: Signature> {
    rules: &'d RuleList<S>,
    matcher: Option<Matcher<S>>,
    times: Option<usize>,
}

impl<'d, S: Signature> RuleBuilder<'d, S> {
    pub(super) fn new(rules: &'d RuleList<S>) -> Self {
        RuleBuilder {
            rules,
            matcher: None,
            times: None,
        }
    }

    /// Answers only the calls whose arguments `matcher` accepts. It gets them as the method's
    /// one argument, or a tuple of them, by reference: `when(|id| *id == 7)`,
    /// `when(|(id, name)| *id == 7 && *name == "book")`. Given twice, both must accept.
    pub fn when<F>(mut self, matcher: F) -> Self
    where
        F: for<'a> Fn(&S::Args<'a>) -> bool + Send + Sync + 'static,
    {
        self.matcher = Some(match self.matcher.take() {
            None => Box::new(matcher),
            Some(first) => Box::new(move |args: &S::Args<'_>| first(args) && matcher(args)),
        });
        self
    }

    /// Answers at most `times` calls; later calls go on to the next rule. Without it, a rule
    /// answers any number of calls. `verify()` reports a rule that
    /// answered fewer.
    pub fn times(mut self, times: usize) -> Self {
        self.times = Some(times);
        self
    }

    /// Answers with a clone of `value`.
    pub fn returns(self, value: <S::Output as Outcome>::Ok)
    where
        <S::Output as Outcome>::Ok: Clone + Send + Sync + 'static,
    {
        self.answers(move |_| S::Output::from_ok(value.clone()));
    }

    /// Answers with what `answer` makes of the call's arguments, taken by value (one
    /// argument, or a tuple of them): `answers(|id| Ok(Order::new(id)))`. The whole return
    /// value is the closure's, so it may be any error the method's error type holds.
    pub fn answers<F>(self, answer: F)
    where
        F: for<'a> Fn(S::Args<'a>) -> S::Output + Send + Sync + 'static,
    {
        self.rules.push(Rule {
            matcher: self.matcher,
            answer: Box::new(answer),
            times: self.times,
            used: AtomicUsize::new(0),
        });
    }

    /// Fails with the error `error` makes for each call (a [`feign_core::Error`](Error) is not
    /// `Clone`), named after the method as a real client's errors are:
    /// `fails(|| Error::timeout("read timed out"))`.
    pub fn fails<F>(self, error: F)
    where
        F: Fn() -> Error + Send + Sync + 'static,
    {
        self.answers(move |_| S::Output::from_error(error().with_method_key(S::KEY)));
    }

    /// Fails as a real client does on a response of `status` with no body, before a fallback:
    /// [`Error::status`] is `Some(status)` and [`Error::is_status`] is true.
    pub fn fails_with_status(self, status: StatusCode) {
        self.fails(move || Error::status_error(status, HeaderMap::new(), bytes::Bytes::new()));
    }
}
