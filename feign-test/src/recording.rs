//! The list of requests a server received, shared by its handles.

use std::sync::{Arc, Mutex};

use crate::report;
use crate::request::RecordedRequest;
use crate::sync::lock;

/// Every request a server received, oldest first. A handle: clones share the list, so a
/// closure or another task can read what the server records.
#[derive(Clone, Debug, Default)]
pub struct Recording(Arc<Mutex<Vec<RecordedRequest>>>);

impl Recording {
    /// Adds `request` at the end: for servers of one's own.
    pub fn push(&self, request: RecordedRequest) {
        lock(&self.0).push(request);
    }

    /// Every request received so far, oldest first.
    pub fn all(&self) -> Vec<RecordedRequest> {
        lock(&self.0).clone()
    }

    /// How many requests were received.
    pub fn len(&self) -> usize {
        lock(&self.0).len()
    }

    /// Whether no request was received.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The only request received.
    ///
    /// # Panics
    ///
    /// When there were none or several: the message lists them.
    pub fn only(&self) -> RecordedRequest {
        let all = self.all();
        match <[RecordedRequest; 1]>::try_from(all) {
            Ok([one]) => one,
            Err(all) => panic!(
                "feign-test: expected exactly one request, received {}{}",
                all.len(),
                report::listing(&all, None)
            ),
        }
    }

    /// Forgets every request received so far.
    pub fn clear(&self) {
        lock(&self.0).clear();
    }
}
