//! [`Warned`]: the warnings a [`Config`](crate::Config) has given, so that each is given once
//! however many clients and balancers bind it.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// The texts of the warnings given, shared by a `Config`'s clones and the properties it
/// returns. It takes no part in a `Config`'s equality.
#[derive(Clone, Default)]
pub(crate) struct Warned(Arc<Mutex<HashSet<String>>>);

impl Warned {
    /// Whether `message` is new (and now remembered).
    pub(crate) fn first(&self, message: &str) -> bool {
        let mut given = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        !given.contains(message) && given.insert(message.to_owned())
    }
}

impl PartialEq for Warned {
    fn eq(&self, _: &Warned) -> bool {
        true
    }
}

impl Eq for Warned {}

impl fmt::Debug for Warned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Warned")
    }
}
