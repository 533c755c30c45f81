//! The adaptive concurrency limit's admission (`AdaptiveLimit::enter`, a ticket's `finish` and
//! drop): however many calls race for the places, no more than the limit hold one at once, a
//! place given back is never lost (after the race the limit's worth of calls are admitted
//! again, and not one more), and a call finishing closes the window and raises the limit while
//! others enter.

use std::time::Duration;

use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use super::adaptive::AdaptiveLimit;
use super::adaptive_config::AdaptiveLimitConfig;
use crate::check;

/// A limit of `limit` calls, never moved by its windows.
fn fixed(limit: u32) -> Arc<AdaptiveLimit> {
    let config = AdaptiveLimitConfig::default()
        .initial_limit(limit)
        .min_limit(limit)
        .max_limit(limit);
    Arc::new(AdaptiveLimit::new("orders", config))
}

/// Admits calls one after another until one is refused: how many places are free.
fn free_places(limit: &AdaptiveLimit) -> usize {
    let mut held = Vec::new();
    while let Ok(ticket) = limit.enter() {
        held.push(ticket);
        assert!(held.len() <= 64, "the limit admits without end");
    }
    held.len()
}

/// `racers` calls enter at once, each noting how many hold a place while it does; the first
/// `finishing` finish, the others are dropped (cancelled). Returns how many were admitted.
fn race(limit: &Arc<AdaptiveLimit>, racers: usize, finishing: usize, bound: usize) -> usize {
    let holding = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..racers)
        .map(|racer| {
            let (limit, holding) = (limit.clone(), holding.clone());
            thread::spawn(move || {
                let Ok(ticket) = limit.enter() else {
                    return false;
                };
                let now = holding.fetch_add(1, Ordering::SeqCst) + 1;
                assert!(
                    now <= bound,
                    "{now} calls admitted under a limit of {bound}"
                );
                holding.fetch_sub(1, Ordering::SeqCst);
                if racer < finishing {
                    ticket.finish();
                }
                true
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .filter(|&admitted| admitted)
        .count()
}

/// Three calls race for two places: at most two hold one at once, at least one gets in, and
/// afterwards both places are free again.
#[test]
fn admits_at_most_the_limit_and_loses_no_place() {
    check(2, || {
        let limit = fixed(2);
        let admitted = race(&limit, 3, 1, 2);
        assert!(admitted >= 1, "every racer refused");
        assert_eq!(free_places(&limit), 2, "a place lost or gained");
    });
}

/// The first window runs at the minimum of one place, and two calls race for it, each
/// finishing when admitted: the first to finish closes the window (of one nanosecond and one
/// sample) and the limit goes up to two while the other may be entering. Never more calls hold
/// a place than the highest limit, and afterwards the new limit's two places are free.
#[test]
fn a_window_closed_while_calls_enter_loses_no_place() {
    check(2, || {
        let config = AdaptiveLimitConfig::default()
            .initial_limit(2)
            .min_limit(1)
            .max_limit(2)
            .sample_window(Duration::from_nanos(1))
            .min_samples(1);
        let limit = Arc::new(AdaptiveLimit::new("orders", config));
        assert_eq!(
            limit.current(),
            1,
            "the first window measures at the minimum"
        );
        let admitted = race(&limit, 2, 2, 2);
        assert!(admitted >= 1, "every racer refused");
        assert_eq!(
            limit.current(),
            2,
            "the first call to finish closed the window"
        );
        assert_eq!(free_places(&limit), 2, "a place lost or gained");
    });
}
