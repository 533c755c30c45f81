//! What a server's connections and its handle share: the recording, the scripts, the
//! expectations, the default reply and the problems found on the way.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::expect::Expected;
use crate::reply::Reply;
use crate::request::{RecordedRequest, Recording};
use crate::script::{Pick, Script};

/// One server's shared state.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) recording: Recording,
    scripts: Mutex<Vec<Script>>,
    pub(crate) expectations: Mutex<Vec<Expected>>,
    otherwise: Mutex<Option<Reply>>,
    problems: Mutex<Vec<String>>,
    connections: AtomicUsize,
}

/// A lock whose holder panicked is used as is: every change under these locks is one push or
/// one assignment, never left half-made.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl State {
    pub(crate) fn add_script(&self, script: Script) {
        lock(&self.scripts).push(script);
    }

    /// Records `request` and returns the reply it gets: the newest matching script's, else the
    /// default.
    pub(crate) async fn answer(&self, request: RecordedRequest) -> Reply {
        self.recording.push(request.clone());
        let pick = lock(&self.scripts)
            .iter_mut()
            .rev()
            .find(|script| script.matcher.matches(&request))
            .map(Script::pick);
        let reply = match pick {
            Some(Pick::Ready(reply)) => reply,
            Some(Pick::Later(reply)) => reply(request.clone()).await,
            None => self.otherwise(&request),
        };
        match reply.invalid_reason() {
            Some(reason) => {
                let text = format!("feign-test: the reply to {request} is invalid: {reason}");
                self.problem(text.clone());
                Reply::status(500).text(text)
            }
            None => reply,
        }
    }

    /// The reply to a request no script matched.
    fn otherwise(&self, request: &RecordedRequest) -> Reply {
        lock(&self.otherwise).clone().unwrap_or_else(|| {
            Reply::status(404).text(format!("feign-test: no reply scripted for {request}"))
        })
    }

    pub(crate) fn set_otherwise(&self, reply: Reply) {
        *lock(&self.otherwise) = Some(reply);
    }

    /// Notes something `verify` must report.
    pub(crate) fn problem(&self, problem: String) {
        lock(&self.problems).push(problem);
    }

    pub(crate) fn problems(&self) -> Vec<String> {
        lock(&self.problems).clone()
    }

    pub(crate) fn connection_accepted(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn connection_count(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }

    /// Forgets the scripts, expectations, default reply, problems and requests.
    pub(crate) fn reset(&self) {
        lock(&self.scripts).clear();
        lock(&self.expectations).clear();
        *lock(&self.otherwise) = None;
        lock(&self.problems).clear();
        self.recording.clear();
    }
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("requests", &self.recording.len())
            .field("connections", &self.connection_count())
            .finish_non_exhaustive()
    }
}
