//! The token refresh: callers that find the token expired (or missing) cause exactly one fetch
//! and all send the token it fetched; callers that find it due but still valid never fetch side
//! by side, and send either the current token or the one that replaces it.

// The provider is held as `Arc<dyn TokenProvider>`, std's `Arc` in the product too.
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use loom::future::block_on;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use super::token::{AccessToken, Refresher, TokenProvider};
use crate::{check, BoxError};

/// Hands out `t1`, `t2`... valid for `valid_for`, and checks that no two fetches overlap.
struct Provider {
    fetches: AtomicUsize,
    in_flight: AtomicUsize,
    /// How long the first token is valid, then every later one.
    valid_for: [Duration; 2],
}

#[async_trait]
impl TokenProvider for Provider {
    async fn token(&self) -> Result<AccessToken, BoxError> {
        let overlapping = self.in_flight.fetch_add(1, Ordering::SeqCst);
        assert_eq!(overlapping, 0, "two token fetches at once");
        let n = self.fetches.fetch_add(1, Ordering::SeqCst) + 1;
        // Lets another caller run while this fetch is out.
        thread::yield_now();
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        let valid_for = self.valid_for[usize::from(n > 1)];
        Ok(AccessToken::new(format!("t{n}"), valid_for))
    }
}

/// A refresher over a [`Provider`], and a handle on the provider to count its fetches.
fn refresher(valid_for: [Duration; 2], refresh_ahead: Duration) -> (Refresher, Arc<Provider>) {
    let provider = Arc::new(Provider {
        fetches: AtomicUsize::new(0),
        in_flight: AtomicUsize::new(0),
        valid_for,
    });
    (Refresher::new(provider.clone(), refresh_ahead), provider)
}

fn value(refresher: &Refresher) -> String {
    let value = block_on(refresher.value()).expect("a token");
    value.to_str().unwrap().to_owned()
}

/// What two callers at once send.
fn two_callers(refresher: Refresher) -> Vec<String> {
    let refresher = loom::sync::Arc::new(refresher);
    let callers: Vec<_> = (0..2)
        .map(|_| {
            let refresher = refresher.clone();
            thread::spawn(move || value(&refresher))
        })
        .collect();
    callers.into_iter().map(|c| c.join().unwrap()).collect()
}

const HOUR: Duration = Duration::from_secs(3600);

/// The cached token has expired: two callers at once cause one fetch, and both send its token.
#[test]
fn callers_on_an_expired_token_share_one_fetch() {
    check(3, || {
        let (refresher, provider) = refresher([Duration::ZERO, HOUR], Duration::ZERO);
        assert_eq!(value(&refresher), "Bearer t1"); // valid for no time: expired at once
        assert_eq!(two_callers(refresher), ["Bearer t2", "Bearer t2"]);
        assert_eq!(provider.fetches.load(Ordering::SeqCst), 2);
    });
}

/// No token yet: the first callers cause one fetch between them.
#[test]
fn first_callers_share_one_fetch() {
    check(3, || {
        let (refresher, provider) = refresher([HOUR, HOUR], Duration::ZERO);
        assert_eq!(two_callers(refresher), ["Bearer t1", "Bearer t1"]);
        assert_eq!(provider.fetches.load(Ordering::SeqCst), 1);
    });
}

/// The token is due for refresh but still valid: callers never fetch side by side (the
/// provider asserts it), and each sends the current token or a newer one.
#[test]
fn a_due_token_is_refreshed_by_one_caller_at_a_time() {
    check(3, || {
        // Every token is due at once: valid for an hour, refreshed two hours ahead.
        let (refresher, provider) = refresher([HOUR, HOUR], 2 * HOUR);
        assert_eq!(value(&refresher), "Bearer t1");
        let fetched: Vec<String> = (2..=3).map(|n| format!("Bearer t{n}")).collect();
        for sent in two_callers(refresher) {
            assert!(sent == "Bearer t1" || fetched.contains(&sent), "{sent}");
        }
        assert!(provider.fetches.load(Ordering::SeqCst) <= 3);
    });
}
