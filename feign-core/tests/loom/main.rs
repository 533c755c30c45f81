//! Model checks of feign-core's lock-free parts with loom, which runs each model under every
//! interleaving of its threads (up to a preemption bound) and fails on the first that breaks an
//! assertion:
//!
//! | model | the code it checks |
//! |---|---|
//! | `cow_map` | `src/cow_map.rs`: `CopyOnWriteMap` |
//! | `resilience::breaker_model` | `src/resilience/breaker.rs`, `word.rs` and `outcomes.rs`: the circuit breaker (`acquire`, `record`, `transition`, the open → half-open turn), its state word and the outcomes recorded under its lock |
//! | `resilience::adaptive_model` | `src/resilience/adaptive.rs`: the adaptive concurrency limit's admission |
//! | `interceptor::token_refresh` | `src/interceptor/token.rs`: the single-flight token refresh |
//!
//! Each model compiles the real source file (`#[path]`) beside a `sync` module of loom's types,
//! where the crate has one of std's, tokio's and arc-swap's (`src/sync.rs`). That is why this
//! is a binary of its own: those modules are compiled again here with other types, apart from
//! `tests/it/` (and why `breaker.rs` and `adaptive.rs` keep their unit tests in files of their
//! own, which this binary leaves out). The few crate items a module names beside its protocol
//! have small stand-ins here (`Error`, `BoxError`, `bearer`, `Classification`); the breaker's
//! settings, metrics and clock are the real `config.rs`, `metrics.rs` and `clock.rs`.
//!
//! Run with `cargo test -p feign-rs-core --test loom`; each model's preemption bound (2 or 3) keeps
//! the whole binary to about ten seconds in a debug build on two cores. A deeper search, about
//! four minutes there: `LOOM_MAX_PREEMPTIONS=4 cargo test -p feign-rs-core --test loom` (the
//! variable overrides every model's bound; `--release` makes it faster).

#[allow(dead_code)] // each crate's models use part of it
mod support;
mod sync;

use support::check;

#[path = "../../src/cow_map.rs"]
#[allow(dead_code)]
mod cow_map;
#[path = "cow_map.rs"]
mod cow_map_model;

#[path = "../../src/clock.rs"]
#[allow(dead_code, unreachable_pub)]
mod clock;

// The included modules' own `mod` lines resolve in `src/`.
#[path = "../../src/resilience"]
mod resilience {
    #[allow(dead_code, unreachable_pub)]
    mod adaptive;
    #[allow(dead_code, unreachable_pub)]
    mod adaptive_config;
    #[allow(dead_code)]
    mod breaker;
    #[allow(dead_code, unreachable_pub)]
    mod config;
    #[allow(dead_code, unreachable_pub)]
    mod metrics;
    mod outcomes;
    #[allow(dead_code, unreachable_pub)]
    mod state;
    mod window;
    mod word;

    /// `classify::Classification`'s stand-in: the breaker converts it into an outcome.
    mod classify {
        #[allow(dead_code)]
        pub(crate) enum Classification {
            Failure,
            Success,
            Ignore,
        }
    }

    #[path = "../../tests/loom/adaptive.rs"]
    mod adaptive_model;
    #[path = "../../tests/loom/breaker.rs"]
    mod breaker_model;
}

/// `credential::bearer`'s stand-in: the token as a header value, `None` when not one.
mod credential {
    pub(crate) fn bearer(token: &str) -> Option<http::HeaderValue> {
        http::HeaderValue::try_from(format!("Bearer {token}")).ok()
    }
}

#[path = "../../src/interceptor"]
mod interceptor {
    #[allow(dead_code, unreachable_pub)]
    mod token;

    #[path = "../../tests/loom/token_refresh.rs"]
    mod token_refresh;
}

/// feign-core's `BoxError`.
type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A stand-in for feign-core's `Error`, with the constructors the included modules call and
/// the predicates the models ask.
#[derive(Debug)]
struct Error(std::borrow::Cow<'static, str>);

#[allow(dead_code)] // each model uses part of it
impl Error {
    fn interceptor(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
        Error(message.into())
    }

    fn builder(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
        Error(message.into())
    }

    fn circuit_open(name: &str) -> Error {
        Error(format!("circuit breaker {name} is open").into())
    }

    fn adaptive_limit_reached(name: &str, limit: u32) -> Error {
        Error(format!("{name}: adaptive concurrency limit of {limit} calls in flight").into())
    }

    fn is_circuit_open(&self) -> bool {
        self.0.starts_with("circuit breaker")
    }

    fn is_bulkhead_full(&self) -> bool {
        self.0.contains("adaptive concurrency limit")
    }

    fn with_source(self, _source: impl Into<BoxError>) -> Error {
        self
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
