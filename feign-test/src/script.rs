//! A server's scripts: which reply each request gets.

use std::future::Future;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use futures_util::FutureExt;

use crate::expect::Problems;
use crate::matcher::Matcher;
use crate::reply::Reply;
use crate::request::RecordedRequest;
use crate::sync::lock;

/// A reply computed from the request, possibly after awaiting something.
pub(crate) type ReplyFn = Arc<dyn Fn(RecordedRequest) -> BoxFuture<'static, Reply> + Send + Sync>;

/// How a script answers the requests it matches.
pub(crate) enum Responder {
    /// The next of these for each request; the last one again once they are used up.
    InOrder(Vec<Reply>),
    /// Whatever the function returns.
    With(ReplyFn),
}

/// A matcher and its replies, with how many requests it answered.
struct Script {
    matcher: Matcher,
    responder: Responder,
    answered: usize,
}

/// A server's scripts, oldest first.
#[derive(Default)]
pub(crate) struct Scripts(Mutex<Vec<Script>>);

impl Scripts {
    /// What the newest script matching `request` answers it with, if one matches.
    pub(crate) fn pick(&self, request: &RecordedRequest) -> Option<Pick> {
        lock(&self.0)
            .iter_mut()
            .rev()
            .find(|script| script.matcher.matches(request))
            .map(Script::pick)
    }

    /// Forgets every script.
    pub(crate) fn clear(&self) {
        lock(&self.0).clear();
    }

    fn add(&self, script: Script) {
        lock(&self.0).push(script);
    }
}

/// What a script will answer one request with, taken while the scripts are locked and run
/// after.
pub(crate) enum Pick {
    Ready(Reply),
    Later(ReplyFn),
}

impl Script {
    /// The reply for the next request this script matches; counts it as answered.
    fn pick(&mut self) -> Pick {
        let turn = self.answered;
        self.answered += 1;
        match &self.responder {
            Responder::InOrder(replies) => match replies.get(turn).or(replies.last()) {
                Some(reply) => Pick::Ready(reply.clone()),
                None => Pick::Ready(Reply::status(500).text(format!(
                    "feign-test: the script for {} was given no reply",
                    self.matcher
                ))),
            },
            Responder::With(reply) => Pick::Later(reply.clone()),
        }
    }
}

/// The answer to the requests [`RecordingServer::on`](crate::RecordingServer::on) describes:
/// call one of its methods to script it.
///
/// Scripts are tried from the most recently added: a later script for the same requests
/// replaces an earlier one, so a test can change a server's answers as it goes.
#[must_use = "a script answers nothing until one of its `respond` methods is called"]
pub struct ScriptBuilder<'a> {
    scripts: &'a Scripts,
    problems: &'a Problems,
    matcher: Matcher,
}

impl<'a> ScriptBuilder<'a> {
    pub(crate) fn new(scripts: &'a Scripts, problems: &'a Problems, matcher: Matcher) -> Self {
        ScriptBuilder {
            scripts,
            problems,
            matcher,
        }
    }

    /// Answers every matching request with `reply`.
    pub fn respond(self, reply: Reply) {
        self.respond_in_order([reply]);
    }

    /// Answers the first matching request with the first reply, the second with the second,
    /// and every one after the last with the last: `[Reply::status(503), Reply::ok()]` fails
    /// once, then succeeds.
    pub fn respond_in_order(self, replies: impl IntoIterator<Item = Reply>) {
        let replies: Vec<Reply> = replies.into_iter().collect();
        for reply in &replies {
            if let Some(reason) = reply.invalid_reason() {
                self.problems
                    .note(format!("a reply for {} is invalid: {reason}", self.matcher));
            }
        }
        self.mount(Responder::InOrder(replies));
    }

    /// Answers each matching request with what `reply` returns for it.
    pub fn respond_with<F>(self, reply: F)
    where
        F: Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
    {
        self.respond_with_async(move |request| std::future::ready(reply(&request)));
    }

    /// Answers each matching request with what the future `reply` returns resolves to: for
    /// answers that wait on the test (a `Notify`, a channel) or on other work.
    pub fn respond_with_async<F, A>(self, reply: F)
    where
        F: Fn(RecordedRequest) -> A + Send + Sync + 'static,
        A: Future<Output = Reply> + Send + 'static,
    {
        self.mount(Responder::With(Arc::new(move |request| {
            reply(request).boxed()
        })));
    }

    fn mount(self, responder: Responder) {
        self.scripts.add(Script {
            matcher: self.matcher,
            responder,
            answered: 0,
        });
    }
}
