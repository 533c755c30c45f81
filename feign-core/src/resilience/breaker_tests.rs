//! The circuit breaker's unit tests, beside `breaker.rs` rather than in it: the loom models
//! compile that file with loom's atomics, which only run inside a model.

use std::sync::Arc;
use std::time::Duration;

use super::breaker::{Breaker, Outcome, Permit};
use super::config::CircuitBreakerConfig;
use super::state::CircuitState;
use crate::Error;

fn config() -> CircuitBreakerConfig {
    CircuitBreakerConfig::default()
        .sliding_window_size(4)
        .minimum_number_of_calls(4)
        .permitted_number_of_calls_in_half_open_state(2)
        .wait_duration_in_open_state(Duration::from_secs(1))
}

fn call(breaker: &Arc<Breaker>, outcome: Outcome) -> Result<(), Error> {
    breaker.acquire().map(|permit| permit.record(outcome))
}

#[tokio::test(start_paused = true)]
async fn walks_the_state_machine() {
    let config = config();
    let mut events = config.subscribe();
    let breaker = Breaker::new("OrderService#get_order", &config);
    for outcome in [Outcome::Failure, Outcome::Failure, Outcome::Success] {
        call(&breaker, outcome).unwrap();
    }
    assert_eq!(breaker.state(), CircuitState::Closed);
    call(&breaker, Outcome::Success).unwrap();
    assert_eq!(breaker.state(), CircuitState::Open);
    let refused = call(&breaker, Outcome::Success).unwrap_err();
    assert!(refused.is_circuit_open());
    assert!(refused.to_string().contains("OrderService#get_order"));

    tokio::time::advance(Duration::from_secs(1)).await;
    tokio::task::yield_now().await;
    assert_eq!(breaker.state(), CircuitState::HalfOpen);
    let first = breaker.acquire().unwrap();
    let second = breaker.acquire().unwrap();
    assert!(breaker.acquire().unwrap_err().is_circuit_open());
    // A dropped call gives its permit back.
    drop(second);
    let second = breaker.acquire().unwrap();
    first.record(Outcome::Success);
    second.record(Outcome::Success);
    assert_eq!(breaker.state(), CircuitState::Closed);

    let seen: Vec<_> = std::iter::from_fn(|| events.try_recv().ok())
        .map(|t| (t.from, t.to))
        .collect();
    assert_eq!(
        seen,
        [
            (CircuitState::Closed, CircuitState::Open),
            (CircuitState::Open, CircuitState::HalfOpen),
            (CircuitState::HalfOpen, CircuitState::Closed),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn outcomes_of_an_older_state_are_not_counted() {
    let breaker = Breaker::new("b", &config());
    let late = breaker.acquire().unwrap();
    for _ in 0..4 {
        call(&breaker, Outcome::Failure).unwrap();
    }
    assert_eq!(breaker.state(), CircuitState::Open);
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(breaker.state(), CircuitState::HalfOpen);
    // Admitted while closed: must not use up a half-open trial.
    late.record(Outcome::Success);
    call(&breaker, Outcome::Failure).unwrap();
    assert_eq!(breaker.state(), CircuitState::HalfOpen);
    call(&breaker, Outcome::Failure).unwrap();
    assert_eq!(breaker.state(), CircuitState::Open);
}

#[tokio::test(start_paused = true)]
async fn slow_calls_open_the_breaker() {
    let config = config().slow_call_duration_threshold(Duration::from_millis(100));
    let breaker = Breaker::new("b", &config);
    for _ in 0..4 {
        let permit = breaker.acquire().unwrap();
        tokio::time::advance(Duration::from_millis(100)).await;
        permit.record(Outcome::Success);
    }
    assert_eq!(breaker.state(), CircuitState::Open);
}

/// Threads race for the trial calls of a half-open breaker, round after round: each round
/// exactly the permitted number get through.
#[test]
fn half_open_permits_are_exact_under_contention() {
    const THREADS: usize = 8;
    const TRIES: usize = 500;
    let config = CircuitBreakerConfig::default()
        .sliding_window_size(1)
        .minimum_number_of_calls(1)
        .wait_duration_in_open_state(Duration::from_millis(1));
    let breaker = Breaker::new("stress", &config);
    call(&breaker, Outcome::Failure).unwrap();
    for round in 0..50 {
        std::thread::sleep(Duration::from_millis(2));
        let start = std::sync::Barrier::new(THREADS);
        let admitted: Vec<Permit> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..THREADS)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        (0..TRIES)
                            .filter_map(|_| breaker.acquire().ok())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            racers
                .into_iter()
                .flat_map(|racer| racer.join().unwrap())
                .collect()
        });
        assert_eq!(admitted.len(), 10, "round {round}");
        // Five failures of ten: 50 %, the breaker opens again.
        for (i, permit) in admitted.into_iter().enumerate() {
            let outcome = if i % 2 == 0 {
                Outcome::Failure
            } else {
                Outcome::Success
            };
            permit.record(outcome);
        }
        assert_eq!(breaker.word_state(), CircuitState::Open);
    }
}
