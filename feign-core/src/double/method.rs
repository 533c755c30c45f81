//! The double of one method: its rules, and the calls it received.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use http::StatusCode;

use super::error::{UnansweredCall, UnmetRule};
use super::rule::{RuleBuilder, RuleList};
use super::{Outcome, Signature};
use crate::Error;

/// The rules and calls of one method of a generated `{Trait}Double`, reached through its
/// `on_{method}()`.
///
/// A call is answered by the first rule, in the order they were added, that matches its
/// arguments and has uses left. A call no rule answers returns an error (an
/// [`UnansweredCall`], through [`Error::custom`]), or panics when the double was made with
/// `{Trait}Double::strict()`.
///
/// Clones share the rules and the calls.
pub struct MethodDouble<S: Signature> {
    shared: Arc<Shared<S>>,
    strict: bool,
}

struct Shared<S: Signature> {
    rules: RuleList<S>,
    record: Mutex<Record<S>>,
}

/// The calls received.
struct Record<S: Signature> {
    calls: usize,
    texts: Vec<String>,
    kept: Vec<S::Args<'static>>,
}

impl<S: Signature> MethodDouble<S> {
    /// A method with no rules; `strict`: a call no rule answers panics.
    pub fn new(strict: bool) -> Self {
        MethodDouble {
            shared: Arc::new(Shared {
                rules: RuleList::new(),
                record: Mutex::new(Record {
                    calls: 0,
                    texts: Vec::new(),
                    kept: Vec::new(),
                }),
            }),
            strict,
        }
    }

    fn record(&self) -> MutexGuard<'_, Record<S>> {
        // No user code runs under this lock, so a poisoned one still holds consistent state.
        self.shared
            .record
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn rule(&self) -> RuleBuilder<'_, S> {
        RuleBuilder::new(&self.shared.rules)
    }

    /// Starts a rule answering only the calls `matcher` accepts: see [`RuleBuilder::when`].
    pub fn when<F>(&self, matcher: F) -> RuleBuilder<'_, S>
    where
        F: for<'a> Fn(&S::Args<'a>) -> bool + Send + Sync + 'static,
    {
        self.rule().when(matcher)
    }

    /// Starts a rule answering at most `times` calls: see [`RuleBuilder::times`].
    pub fn times(&self, times: usize) -> RuleBuilder<'_, S> {
        self.rule().times(times)
    }

    /// Adds a rule answering every call with a clone of `value`.
    pub fn returns(&self, value: <S::Output as Outcome>::Ok)
    where
        <S::Output as Outcome>::Ok: Clone + Send + Sync + 'static,
    {
        self.rule().returns(value);
    }

    /// Adds a rule answering every call with what `answer` makes of its arguments: see
    /// [`RuleBuilder::answers`].
    pub fn answers<F>(&self, answer: F)
    where
        F: for<'a> Fn(S::Args<'a>) -> S::Output + Send + Sync + 'static,
    {
        self.rule().answers(answer);
    }

    /// Adds a rule failing every call with the error `error` makes: see [`RuleBuilder::fails`].
    pub fn fails<F>(&self, error: F)
    where
        F: Fn() -> Error + Send + Sync + 'static,
    {
        self.rule().fails(error);
    }

    /// Adds a rule failing every call as a response of `status` would: see
    /// [`RuleBuilder::fails_with_status`].
    pub fn fails_with_status(&self, status: StatusCode) {
        self.rule().fails_with_status(status);
    }

    /// How many times the method was called, answered or not.
    pub fn calls(&self) -> usize {
        self.record().calls
    }

    /// The arguments of every call, in order (one argument, or a tuple of them), when the
    /// method's parameters are owned and `Clone` (no `&str`, no stream); empty otherwise:
    /// [`argument_texts`](Self::argument_texts) has every call.
    pub fn arguments(&self) -> Vec<S::Args<'static>>
    where
        S::Args<'static>: Clone,
    {
        self.record().kept.clone()
    }

    /// The arguments of every call as text, in order: each argument's `Debug` form, `_` for
    /// one that is not `Debug`, `***` for a header argument with a sensitive name (as the
    /// client's logs show it), any `#[header_map]` or `#[param]`, and a `#[query]` whose name
    /// looks like a credential (`token`, `key`, `password`...); separated by `, `.
    pub fn argument_texts(&self) -> Vec<String> {
        self.record().texts.clone()
    }

    /// Removes the rules and forgets the calls.
    pub fn reset(&self) {
        self.shared.rules.clear();
        let mut record = self.record();
        record.calls = 0;
        record.texts.clear();
        record.kept.clear();
    }

    /// Every rule limited with `times(n)` that answered fewer than `n` calls.
    pub fn verify(&self) -> Result<(), Vec<UnmetRule>> {
        let unmet: Vec<UnmetRule> = self
            .shared
            .rules
            .snapshot()
            .iter()
            .enumerate()
            .filter_map(|(index, rule)| {
                let (times, used) = rule.unmet()?;
                Some(UnmetRule::new(S::KEY, index, times, used))
            })
            .collect();
        if unmet.is_empty() {
            Ok(())
        } else {
            Err(unmet)
        }
    }

    /// Answers a call: records it, then asks the rules. Called by the generated method with
    /// its arguments, their text and, when they can be kept, their copy.
    pub fn call<'a>(
        &self,
        args: S::Args<'a>,
        texts: &[String],
        kept: Option<S::Args<'static>>,
    ) -> S::Output {
        let text = texts.join(", ");
        {
            let mut record = self.record();
            record.calls += 1;
            record.texts.push(text.clone());
            record.kept.extend(kept);
        }
        let rules = self.shared.rules.snapshot();
        for rule in &rules {
            if rule.matches(&args) && rule.claim() {
                return rule.answer(args);
            }
        }
        let unanswered = UnansweredCall::new(S::TRAIT, S::METHOD, text, rules.len());
        if self.strict {
            // The user asked for this panic by making the double with `strict()`.
            panic!("{unanswered}");
        }
        S::Output::from_error(Error::custom(unanswered).with_method_key(S::KEY))
    }
}

impl<S: Signature> Clone for MethodDouble<S> {
    fn clone(&self) -> Self {
        MethodDouble {
            shared: Arc::clone(&self.shared),
            strict: self.strict,
        }
    }
}

impl<S: Signature> fmt::Debug for MethodDouble<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rules = self.shared.rules.snapshot();
        let answered: usize = rules.iter().map(|rule| rule.used()).sum();
        f.debug_struct("MethodDouble")
            .field("method", &S::KEY)
            .field("rules", &rules.len())
            .field("calls", &self.record().calls)
            .field("answered", &answered)
            .finish()
    }
}
