//! What a server's connections and its handle share: the recording, the scripts, the
//! expectations, the default reply and the problems found on the way.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::expect::{Expectations, Problems};
use crate::recording::Recording;
use crate::reply::Reply;
use crate::request::RecordedRequest;
use crate::script::{Pick, Scripts};
use crate::sync::lock;

/// One server's shared state.
#[derive(Default)]
pub(crate) struct State {
    pub(crate) recording: Recording,
    pub(crate) scripts: Scripts,
    pub(crate) expectations: Expectations,
    pub(crate) problems: Problems,
    otherwise: Mutex<Option<Reply>>,
    connections: AtomicUsize,
}

impl State {
    /// Records `request` and returns the reply it gets: the newest matching script's, else the
    /// default. An invalid reply becomes a 500 naming what is wrong, and a problem to report.
    pub(crate) async fn answer(&self, request: RecordedRequest) -> Reply {
        self.recording.push(request.clone());
        let reply = match self.scripts.pick(&request) {
            Some(Pick::Ready(reply)) => reply,
            Some(Pick::Later(reply)) => reply(request.clone()).await,
            None => self.otherwise(&request),
        };
        match reply.invalid_reason() {
            Some(reason) => {
                let text = format!("feign-test: the reply to {request} is invalid: {reason}");
                self.problems.note(text.clone());
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

    pub(crate) fn connection_accepted(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn connection_count(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }

    /// Forgets the scripts, expectations, default reply, problems and requests.
    pub(crate) fn reset(&self) {
        self.scripts.clear();
        self.expectations.clear();
        *lock(&self.otherwise) = None;
        self.problems.clear();
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
