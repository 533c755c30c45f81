//! Hedged requests: the first attempt of a balanced idempotent call, and a hedge to an instance
//! not yet tried each time the hedging delay passes with no answer.

use std::future::Future;
use std::task::Poll;

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::time::Instant;

use super::exchange::Target;
use super::receive::Receive;
use super::send::Sending;
use crate::attempt::{Attempt, Attempts};
use crate::call_info::CallInfo;
use crate::hedging::Hedging;
use crate::{log, Error};

impl Sending<'_> {
    /// Whether the call may be hedged: idempotent, balanced, and with a body that can go out
    /// twice at once.
    pub(super) fn hedgeable(&self, call: CallInfo<'_>) -> bool {
        call.idempotent
            && self.template.stream.is_none()
            && matches!(self.exchange.target, Target::Resolver(_))
    }

    /// The first attempt, and a hedge each time the delay passes with no answer, while the
    /// retry policy allows one and the resolver has an instance not tried yet. The first
    /// response wins and the attempts still out are dropped (the balancer hears of them as
    /// discarded); a failed attempt leaves the others running.
    ///
    /// With a percentile delay, the first attempt's latency goes to the method's window when it
    /// answered with a 2xx, or, when another attempt answered first, the time until then (a
    /// lower bound of it).
    pub(super) async fn hedged<R: Receive>(
        &self,
        call: CallInfo<'_>,
        hedging: &Hedging,
        attempts: &mut Attempts,
    ) -> (Result<R, Error>, Option<http::Uri>) {
        let (delay, window) = hedging.delay_for(self.template.meta);
        let first = match self.next(call, attempts) {
            Ok(attempt) => attempt,
            Err(e) => return (Err(e), None),
        };
        let started = Instant::now();
        let mut first_out = true;
        let mut running = FuturesUnordered::new();
        running.push(self.send_numbered::<R>(first, 1));
        let mut hedges_left = hedging.config.max_hedges;
        let mut timer = Box::pin(tokio::time::sleep(delay));
        loop {
            let event = std::future::poll_fn(|cx| {
                if let Poll::Ready(done) = running.poll_next_unpin(cx) {
                    return Poll::Ready(done);
                }
                if hedges_left > 0 && timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                Poll::Pending
            })
            .await;
            match event {
                Some((number, Ok(response), uri)) => {
                    if let Some(window) = &window {
                        if first_out && (number > 1 || response.status().is_success()) {
                            window.record(started.elapsed());
                        }
                    }
                    return (Ok(response), uri);
                }
                Some((_, failed, uri)) if running.is_empty() => return (failed, uri),
                Some((number, _, _)) => first_out &= number != 1,
                None => {
                    hedges_left -= 1;
                    match self.hedge(call, attempts) {
                        Some(attempt) => {
                            let number = attempts.made();
                            log::hedge(self.exchange.log_level, self.template.meta.key, number);
                            running.push(self.send_numbered::<R>(attempt, number));
                            timer.as_mut().reset(Instant::now() + delay);
                        }
                        None => hedges_left = 0,
                    }
                }
            }
        }
    }

    /// Where a hedge goes: an instance not tried yet, when the retry policy pays for it.
    fn hedge(&self, call: CallInfo<'_>, attempts: &mut Attempts) -> Option<Attempt> {
        let Target::Resolver(resolver) = &self.exchange.target else {
            return None;
        };
        if !self.exchange.retry.allow_hedge(&call) {
            return None;
        }
        attempts.choose_untried(&**resolver, call, &self.template.headers)
    }

    /// [`send_to`](Self::send_to), naming the attempt in its result.
    async fn send_numbered<R: Receive>(
        &self,
        attempt: Attempt,
        number: u32,
    ) -> (u32, Result<R, Error>, Option<http::Uri>) {
        let (result, uri) = self.send_to::<R>(attempt, number).await;
        (number, result, uri)
    }
}
