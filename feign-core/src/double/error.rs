//! What a double reports: a call no rule answered, a rule used fewer times than it was set for.

use std::fmt;

/// A call to a test double that none of the method's rules answered. The double returns it as
/// a [`feign_core::Error`](crate::Error) (`is_custom()`, `downcast_ref::<UnansweredCall>()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnansweredCall {
    trait_name: &'static str,
    method: &'static str,
    arguments: String,
    rules: usize,
}

impl UnansweredCall {
    pub(super) fn new(
        trait_name: &'static str,
        method: &'static str,
        arguments: String,
        rules: usize,
    ) -> Self {
        UnansweredCall {
            trait_name,
            method,
            arguments,
            rules,
        }
    }

    /// The trait's name.
    pub fn trait_name(&self) -> &'static str {
        self.trait_name
    }

    /// The method's name.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The arguments as [`MethodDouble::argument_texts`](super::MethodDouble::argument_texts)
    /// shows them.
    pub fn arguments(&self) -> &str {
        &self.arguments
    }
}

impl fmt::Display for UnansweredCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (trait_name, method) = (self.trait_name, self.method);
        write!(
            f,
            "no rule of the test double answers {trait_name}::{method}({}): ",
            self.arguments
        )?;
        match self.rules {
            0 => write!(f, "the method has no rule; add one with `on_{method}()`"),
            1 => f.write_str("its one rule does not match these arguments or is used up"),
            rules => write!(
                f,
                "none of its {rules} rules matches these arguments with uses left"
            ),
        }
    }
}

impl std::error::Error for UnansweredCall {}

/// A rule set with `times(n)` that answered fewer than `n` calls, from `verify()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmetRule {
    method_key: &'static str,
    index: usize,
    times: usize,
    used: usize,
}

impl UnmetRule {
    pub(super) fn new(method_key: &'static str, index: usize, times: usize, used: usize) -> Self {
        UnmetRule {
            method_key,
            index,
            times,
            used,
        }
    }

    /// The method, as `Trait#method`.
    pub fn method_key(&self) -> &'static str {
        self.method_key
    }

    /// The rule's place among the method's rules, from 0 in the order they were added.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The calls it was set to answer.
    pub fn times(&self) -> usize {
        self.times
    }

    /// The calls it answered.
    pub fn used(&self) -> usize {
        self.used
    }
}

impl fmt::Display for UnmetRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rule {} of {} was set for {} calls and answered {}",
            self.index, self.method_key, self.times, self.used
        )
    }
}

impl std::error::Error for UnmetRule {}
