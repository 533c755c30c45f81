//! `RecordingServer`: a real HTTP/1 server on 127.0.0.1 that records every request and answers
//! as its scripts say.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::conn;
use crate::expect::{self, Expectation};
use crate::matcher::Matcher;
use crate::recording::Recording;
use crate::reply::Reply;
use crate::report;
use crate::request::RecordedRequest;
use crate::script::ScriptBuilder;
use crate::state::State;

/// An HTTP/1 server on a fresh port of 127.0.0.1, serving on the tokio runtime that started
/// it. It records every request whole ([`requests`](Self::requests)), answers as its scripts
/// say ([`on`](Self::on)), and checks what a test expected ([`verify`](Self::verify)).
///
/// A request no script matches gets 404 with a body naming it (see
/// [`otherwise`](Self::otherwise)). Dropping the server stops it: its port refuses
/// connections, and the connections it had are closed.
#[derive(Debug)]
pub struct RecordingServer {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl RecordingServer {
    /// Starts a server on `127.0.0.1:0`.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound (see [`try_start`](Self::try_start)) or outside a
    /// tokio runtime.
    pub async fn start() -> RecordingServer {
        match RecordingServer::try_start().await {
            Ok(server) => server,
            Err(e) => panic!("feign-test: cannot bind a port on 127.0.0.1: {e}"),
        }
    }

    /// Starts a server on `127.0.0.1:0`, or says why no port could be bound.
    pub async fn try_start() -> std::io::Result<RecordingServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State::default());
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(conn::accept_loop(listener, state.clone(), stopped));
        Ok(RecordingServer {
            addr,
            state,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// Starts `n` servers, each on its own port: the instances of a balanced service (see
    /// [`Fleet`](crate::Fleet)).
    pub async fn start_many(n: usize) -> Vec<RecordingServer> {
        let mut servers = Vec::with_capacity(n);
        for _ in 0..n {
            servers.push(RecordingServer::start().await);
        }
        servers
    }

    /// The base URL, `http://127.0.0.1:{port}`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Scripts the answer to the requests `matcher` describes.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use feign_test::{Matcher, RecordingServer, Reply};
    ///
    /// let server = RecordingServer::start().await;
    /// server.on(Matcher::get("/health")).respond(Reply::ok().text("UP"));
    /// server
    ///     .on(Matcher::post("/orders"))
    ///     .respond_in_order([Reply::status(503), Reply::status(201)]);
    /// # }
    /// ```
    pub fn on(&self, matcher: Matcher) -> ScriptBuilder<'_> {
        ScriptBuilder::new(&self.state.scripts, &self.state.problems, matcher)
    }

    /// The reply to requests no script matches, instead of the default 404 naming the request.
    pub fn otherwise(&self, reply: Reply) {
        if let Some(reason) = reply.invalid_reason() {
            self.state
                .problems
                .note(format!("the default reply is invalid: {reason}"));
        }
        self.state.set_otherwise(reply);
    }

    /// Expects requests matching `matcher`: at least one unless the returned
    /// [`Expectation`] says how many. [`verify`](Self::verify) checks.
    pub fn expect(&self, matcher: Matcher) -> Expectation<'_> {
        Expectation::add(&self.state.expectations, matcher)
    }

    /// Checks every expectation, and that every reply the server had to send was valid.
    ///
    /// # Panics
    ///
    /// When one is not met: the message names each, and lists every request received with
    /// its headers (secrets hidden) and body.
    pub fn verify(&self) {
        let received = self.requests();
        if let Some(failures) =
            expect::failures(&received, &self.state.expectations, &self.state.problems)
        {
            panic!("{failures}");
        }
    }

    /// The first request received that matches `matcher`.
    ///
    /// # Panics
    ///
    /// When none does: the message lists every request received and, for each, how it
    /// differs from `matcher`.
    pub fn assert_received(&self, matcher: &Matcher) -> RecordedRequest {
        let received = self.requests();
        match received.iter().find(|r| matcher.matches(r)) {
            Some(found) => found.clone(),
            None => panic!(
                "feign-test: expected a request {matcher}, received none{}",
                report::listing(&received, Some(matcher))
            ),
        }
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.recording.all()
    }

    /// The requests received so far that match `matcher`, oldest first.
    pub fn received(&self, matcher: &Matcher) -> Vec<RecordedRequest> {
        let mut requests = self.requests();
        requests.retain(|r| matcher.matches(r));
        requests
    }

    /// How many requests were received.
    pub fn request_count(&self) -> usize {
        self.state.recording.len()
    }

    /// A handle on the recorded requests, which clones share: for closures and other tasks.
    pub fn recording(&self) -> Recording {
        self.state.recording.clone()
    }

    /// How many connections were accepted.
    pub fn connection_count(&self) -> usize {
        self.state.connection_count()
    }

    /// Forgets the scripts, expectations, default reply and recorded requests: the server
    /// answers as if just started (its connections stay open).
    pub fn reset(&self) {
        self.state.reset();
    }

    /// Stops the server and waits until it has: the port refuses connections and every
    /// connection is closed, requests in flight unanswered.
    pub async fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Lets the server run until its runtime shuts down (the end of a `#[tokio::test]`), with
    /// no handle left to stop it: for helpers that hand out only its URL and [`Recording`].
    pub fn detach(mut self) {
        // Dropped without a word: the accept loop stops only when told.
        self.stop = None;
    }
}

impl Drop for RecordingServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
