//! The attempts of one call, counted the same way wherever they are made: by a feign client's
//! call, and by feign-lb's balancer for any HTTP call (its tower layer and its reqwest
//! middleware).
//!
//! [`Attempts`] keeps what the attempts of one call share: the instances already tried (so a
//! retry avoids them), the instance a retry must go back to, and when the call started.
//! [`Attempt`] is one of them: the URL it goes to, with the credentials an instance URL's
//! userinfo stood for as an `Authorization` header, and the report of how it ended, made
//! exactly once (as discarded when it is dropped unfinished).

use std::sync::Arc;
use std::time::Duration;

use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue};
use tokio::time::Instant;

use crate::call_info::CallInfo;
use crate::resolve::{AttemptOutcome, ChooseRequest, Chosen, Resolver};
use crate::retry::{RetryContext, RetryDecision, RetryPolicy};
use crate::Error;

/// What the attempts of one call share.
#[derive(Debug)]
pub struct Attempts {
    tried: Tried,
    made: u32,
    same_instance: Option<Arc<str>>,
    started: Instant,
}

impl Default for Attempts {
    fn default() -> Self {
        Attempts::new()
    }
}

impl Attempts {
    /// A call about to make its first attempt.
    pub fn new() -> Self {
        Attempts {
            tried: Tried::None,
            made: 0,
            same_instance: None,
            started: Instant::now(),
        }
    }

    /// The attempts made so far.
    pub fn made(&self) -> u32 {
        self.made
    }

    /// The instances tried so far, oldest first.
    pub fn tried(&self) -> &[Arc<str>] {
        self.tried.as_slice()
    }

    /// The next attempt, to the instance `resolver` picks for `call` (`headers`: the request's,
    /// for hints and sticky cookies); the instance joins those tried.
    pub fn choose(
        &mut self,
        resolver: &dyn Resolver,
        call: CallInfo<'_>,
        headers: &HeaderMap,
    ) -> Result<Attempt, Error> {
        // An attempt that finds no instance is an attempt too: the retry policy counts it.
        self.made += 1;
        let chosen = self.pick(resolver, call, headers, self.made)?;
        self.tried.push(chosen.instance_id().clone());
        Ok(Attempt::at(chosen))
    }

    /// A hedge: the next attempt, when `resolver` picks an instance not tried yet; `None`
    /// otherwise (the pick is reported as discarded).
    pub fn choose_untried(
        &mut self,
        resolver: &dyn Resolver,
        call: CallInfo<'_>,
        headers: &HeaderMap,
    ) -> Option<Attempt> {
        let chosen = self.pick(resolver, call, headers, self.made + 1).ok()?;
        if self.tried().contains(chosen.instance_id()) {
            return None;
        }
        self.tried.push(chosen.instance_id().clone());
        self.made += 1;
        Some(Attempt::at(chosen))
    }

    fn pick(
        &mut self,
        resolver: &dyn Resolver,
        call: CallInfo<'_>,
        headers: &HeaderMap,
        attempt: u32,
    ) -> Result<Chosen, Error> {
        let request = ChooseRequest {
            call,
            headers,
            attempt,
            tried: self.tried.as_slice(),
            same_instance: self.same_instance.as_deref(),
        };
        let chosen = resolver.choose(&request);
        self.same_instance = None;
        chosen
    }

    /// The next attempt, to a fixed base URL (its userinfo already taken out as
    /// `authorization`).
    pub fn fixed(&mut self, base: &Arc<str>, authorization: Option<&HeaderValue>) -> Attempt {
        self.made += 1;
        Attempt {
            base: base.clone(),
            authorization: authorization.cloned(),
            chosen: None,
        }
    }

    /// Asks `policy` whether the call goes on after its last attempt failed with `error`;
    /// `remaining` is what is left of its total timeout, if it has one. A retry the policy wants
    /// on the same instance is remembered for the next [`choose`](Attempts::choose).
    pub fn decide(
        &mut self,
        policy: &dyn RetryPolicy,
        call: CallInfo<'_>,
        error: &Error,
        remaining: Option<Duration>,
    ) -> RetryDecision {
        let decision = policy.decide(&RetryContext {
            call,
            attempt: self.made,
            error,
            elapsed: self.started.elapsed(),
            remaining,
        });
        if let RetryDecision::Retry {
            same_instance: true,
            ..
        } = decision
        {
            self.same_instance = self.tried.last().cloned();
        }
        decision
    }
}

/// One attempt: where it goes, and the report of how it ended to the instance's observer,
/// made exactly once (through [`finish`](Attempt::finish), or as discarded when dropped first).
/// The clock is read only when there is an observer to report to.
#[derive(Debug)]
pub struct Attempt {
    /// The base URL without userinfo.
    base: Arc<str>,
    /// The base URL's credentials as a Basic `Authorization` value (sensitive).
    authorization: Option<HeaderValue>,
    chosen: Option<(Chosen, Instant)>,
}

impl Attempt {
    fn at(chosen: Chosen) -> Attempt {
        let (base, authorization) = crate::redact::split_basic_auth(chosen.base_url());
        let base = match base {
            std::borrow::Cow::Borrowed(_) => chosen.base_url().clone(),
            std::borrow::Cow::Owned(stripped) => Arc::from(stripped),
        };
        Attempt {
            base,
            authorization,
            chosen: Some((chosen, Instant::now())),
        }
    }

    /// The instance a resolver chose; `None` for a fixed URL.
    pub fn instance_id(&self) -> Option<&Arc<str>> {
        self.chosen.as_ref().map(|(chosen, _)| chosen.instance_id())
    }

    /// The URL of `path_and_query` (`/` when empty) at the attempt's base.
    pub fn url(&self, path_and_query: &str) -> String {
        let base = self.base.trim_end_matches('/');
        let path = if path_and_query.is_empty() {
            "/"
        } else {
            path_and_query
        };
        let mut url = String::with_capacity(base.len() + path.len());
        url.push_str(base);
        url.push_str(path);
        url
    }

    /// Adds the base URL's credentials, unless the request carries its own `Authorization`.
    pub fn authorize(&self, headers: &mut HeaderMap) {
        if let Some(value) = &self.authorization {
            headers
                .entry(AUTHORIZATION)
                .or_insert_with(|| value.clone());
        }
    }

    /// Reports how the attempt ended.
    pub fn finish(mut self, outcome: &AttemptOutcome<'_>) {
        self.report(outcome);
    }

    fn report(&mut self, outcome: &AttemptOutcome<'_>) {
        if let Some((chosen, started)) = self.chosen.take() {
            // One reading for both the attempt's length and the observer's timestamps.
            let ended = Instant::now();
            chosen.complete_at(outcome, ended.saturating_duration_since(started), ended);
        }
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        self.report(&AttemptOutcome::Discarded);
    }
}

/// The instances a call's attempts went to, in order. Most calls make one attempt, so the
/// first is kept inline and only a retry allocates.
#[derive(Debug, Default)]
enum Tried {
    #[default]
    None,
    One(Arc<str>),
    Many(Vec<Arc<str>>),
}

impl Tried {
    fn as_slice(&self) -> &[Arc<str>] {
        match self {
            Tried::None => &[],
            Tried::One(only) => std::slice::from_ref(only),
            Tried::Many(all) => all,
        }
    }

    fn last(&self) -> Option<&Arc<str>> {
        self.as_slice().last()
    }

    fn push(&mut self, instance: Arc<str>) {
        *self = match std::mem::take(self) {
            Tried::None => Tried::One(instance),
            Tried::One(first) => Tried::Many(vec![first, instance]),
            Tried::Many(mut all) => {
                all.push(instance);
                Tried::Many(all)
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tried_instances_keep_their_order_through_the_inline_first() {
        let mut tried = Tried::default();
        assert!(tried.as_slice().is_empty() && tried.last().is_none());
        for (count, id) in ["a", "b", "c"].into_iter().enumerate() {
            tried.push(Arc::from(id));
            assert_eq!(tried.as_slice().len(), count + 1);
            assert_eq!(tried.last().map(|last| &**last), Some(id));
        }
        let ids: Vec<&str> = tried.as_slice().iter().map(|id| &**id).collect();
        assert_eq!(ids, ["a", "b", "c"]);
    }

    #[test]
    fn urls_join_the_base_and_the_path_once() {
        let mut attempts = Attempts::new();
        let base: Arc<str> = Arc::from("http://127.0.0.1:8080/api/");
        let attempt = attempts.fixed(&base, None);
        assert_eq!(
            attempt.url("/orders/1?x=2"),
            "http://127.0.0.1:8080/api/orders/1?x=2"
        );
        assert_eq!(attempt.url(""), "http://127.0.0.1:8080/api/");
        assert_eq!(attempts.made(), 1);
    }
}
