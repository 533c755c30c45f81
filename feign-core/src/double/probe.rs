//! What generated doubles call: `verify_all`, and the probes that show and keep arguments
//! whose types the macro cannot inspect:
//! method resolution picks the `Debug` (or `Clone`) implementation when the type has one and
//! the fallback otherwise, since a method taking `&Probe` is found before one taking
//! `&&Probe`.

use std::fmt::Debug;

use super::UnmetRule;
use crate::redact;

/// An argument, for the traits below.
pub struct Probe<'a, T: ?Sized>(pub &'a T);

/// `Debug` text of a `Debug` argument.
pub trait DebugText {
    /// The argument's `Debug` form.
    fn debug_text(&self) -> String;
}

impl<T: Debug + ?Sized> DebugText for Probe<'_, T> {
    fn debug_text(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// The text of an argument that is not `Debug`.
pub trait NoDebugText {
    /// `_`.
    fn debug_text(&self) -> String;
}

impl<T: ?Sized> NoDebugText for &Probe<'_, T> {
    fn debug_text(&self) -> String {
        "_".to_owned()
    }
}

/// A copy of `Clone` arguments.
pub trait Keep<T> {
    /// A clone.
    fn keep(&self) -> Option<T>;
}

impl<T: Clone> Keep<T> for Probe<'_, T> {
    fn keep(&self) -> Option<T> {
        Some(self.0.clone())
    }
}

/// No copy of arguments that are not `Clone`.
pub trait NoKeep<T> {
    /// `None`.
    fn keep(&self) -> Option<T>;
}

impl<T> NoKeep<T> for &Probe<'_, T> {
    fn keep(&self) -> Option<T> {
        None
    }
}

/// The text of a `#[header("name")]` argument: masked when the name is one the client's logs
/// mask (`Authorization`, `Cookie`...) or looks like a credential (`X-Api-Key`).
pub fn header_text(name: &str, text: String) -> String {
    if redact::is_sensitive_name(name) || redact::is_secret_param(name) {
        redact::MASK.to_owned()
    } else {
        text
    }
}

/// The text of a `#[query("name")]` argument: masked when the name looks like a credential,
/// as in the URLs the client shows.
pub fn query_text(name: &str, text: String) -> String {
    if redact::is_secret_param(name) {
        redact::MASK.to_owned()
    } else {
        text
    }
}

/// The text of an argument whose header name is not known at compile time (`#[header_map]`,
/// `#[param]`).
pub fn masked() -> String {
    redact::MASK.to_owned()
}

/// The unmet rules of every method of a double.
pub fn verify_all<const N: usize>(
    methods: [Result<(), Vec<UnmetRule>>; N],
) -> Result<(), Vec<UnmetRule>> {
    let unmet: Vec<UnmetRule> = methods
        .into_iter()
        .filter_map(Result::err)
        .flatten()
        .collect();
    if unmet.is_empty() {
        Ok(())
    } else {
        Err(unmet)
    }
}
