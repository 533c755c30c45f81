//! Model checks of feign-core's lock-free parts with loom, which runs each model under every
//! interleaving of its threads (up to a preemption bound) and fails on the first that breaks an
//! assertion:
//!
//! | model | the code it checks |
//! |---|---|
//! | `cow_map` | `src/cow_map.rs`: `CopyOnWriteMap` |
//! | `resilience::breaker` | `src/resilience/word.rs` and `outcomes.rs`: the circuit breaker's state word and the outcomes recorded under its lock |
//! | `interceptor::token_refresh` | `src/interceptor/token.rs`: the single-flight token refresh |
//!
//! Each model compiles the real source file (`#[path]`) beside a `sync` module of loom's types,
//! where the crate has one of std's, tokio's and arc-swap's (`src/sync.rs`). That is why this
//! is a binary of its own: those modules are compiled again here with other types, apart from
//! `tests/it/`. The few crate items a module names beside its protocol have small stand-ins
//! here (`Error`, `BoxError`, `bearer`).
//!
//! Run with `cargo test -p feign-core --test loom`; each model's preemption bound (2 or 3) keeps
//! the whole binary to about ten seconds in a debug build on two cores. A deeper search, about
//! four minutes there: `LOOM_MAX_PREEMPTIONS=4 cargo test -p feign-core --test loom` (the
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

// The included modules' own `mod` lines resolve in `src/`.
#[path = "../../src/resilience"]
mod resilience {
    mod outcomes;
    #[allow(dead_code, unreachable_pub)]
    mod state;
    mod window;
    mod word;

    #[path = "../../tests/loom/breaker.rs"]
    mod breaker;
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

/// A stand-in for feign-core's `Error`, with the two constructors `token.rs` calls.
#[derive(Debug)]
struct Error(std::borrow::Cow<'static, str>);

impl Error {
    fn interceptor(message: impl Into<std::borrow::Cow<'static, str>>) -> Error {
        Error(message.into())
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
