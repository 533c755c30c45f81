//! feign-core: the runtime behind `#[feign_client]`.
//!
//! (Crate docs to be written with the runtime: feature table, runnable example, compile_fail
//! doctest of the typical mistake.)

mod meta;
mod resolve;
mod retry;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use feign_macros::feign_client;
pub use resolve::{AttemptOutcome, CallObserver, ChooseRequest, Chosen, Resolver};
pub use retry::{RetryContext, RetryDecision, RetryPolicy};
