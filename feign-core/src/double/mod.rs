//! Test doubles of `#[feign_client]` traits (feature `test-double`).
//!
//! With the feature on, `#[feign_client] trait OrderService` also generates `OrderServiceDouble`:
//! an implementation of the trait that sends nothing, answers each method by the rules a test
//! gives it, and records the calls. Code under test that takes `Arc<dyn OrderService>` takes the
//! double unchanged. Turn the feature on for tests only:
//!
//! ```toml
//! [dev-dependencies]
//! feign-core = { version = "0.1", features = ["test-double"] }
//! ```
//!
//! Per method, `double.on_get_order()` gives its [`MethodDouble`]:
//!
//! | call | what it does |
//! |---|---|
//! | `.returns(value)` | answers with a clone of `value` |
//! | `.answers(\|id\| Ok(..))` | answers with what the closure makes of the arguments (by value) |
//! | `.fails(\|\| Error::timeout(".."))`, `.fails_with_status(StatusCode::NOT_FOUND)` | fails as a client would |
//! | `.when(\|id\| *id == 7)` | starts a rule for the calls whose arguments (by reference) it accepts |
//! | `.times(2)` | starts a rule answering at most two calls |
//! | `.calls()`, `.arguments()`, `.argument_texts()` | what the method received |
//! | `.verify()` | every `times(n)` rule answered its `n` calls |
//!
//! A closure gets the method's one argument, or a tuple of its arguments. The first rule that
//! matches and has uses left answers; a call none answers returns an error naming the trait,
//! the method and the arguments ([`UnansweredCall`]), or panics if the double was made with
//! `OrderServiceDouble::strict()`. The double and its methods are `Clone` over shared state, and
//! `Send + Sync`.
//!
//! ```
//! use std::sync::Arc;
//!
//! use feign_core::{feign_client, http::StatusCode, Error};
//!
//! #[feign_client("order-service", url = "http://127.0.0.1:8080")]
//! pub trait OrderService {
//!     #[get("/orders/{id}")]
//!     async fn status(&self, #[path] id: u64) -> Result<String, Error>;
//! }
//!
//! async fn describe(orders: Arc<dyn OrderService>, id: u64) -> String {
//!     match orders.status(id).await {
//!         Ok(status) => status,
//!         Err(error) if error.status() == Some(StatusCode::NOT_FOUND) => "unknown".to_owned(),
//!         Err(error) => format!("failed: {error}"),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let orders = OrderServiceDouble::new();
//! orders.on_status().when(|id| *id == 7).returns("shipped".to_owned());
//! orders.on_status().fails_with_status(StatusCode::NOT_FOUND);
//!
//! let service: Arc<dyn OrderService> = Arc::new(orders.clone());
//! assert_eq!(describe(service.clone(), 7).await, "shipped");
//! assert_eq!(describe(service, 8).await, "unknown");
//! assert_eq!(orders.on_status().calls(), 2);
//! assert_eq!(orders.on_status().arguments(), [7, 8]);
//! # }
//! ```
//!
//! Limits: a return type whose value is not `Clone` (`StreamingResponse`, `Response` is) is
//! answered with `answers`; a double is generated only for a trait usable as `dyn Trait` (no
//! generic method, no `impl Trait` parameter); a borrowed parameter type names its lifetime
//! when it has one hidden in a path (`Cow<'_, str>`, not `Cow<str>`).

mod error;
mod method;
#[doc(hidden)]
pub mod probe;
mod rule;

pub use error::{UnansweredCall, UnmetRule};
pub use method::MethodDouble;
pub use rule::RuleBuilder;

use crate::Error;

/// A method of a client trait, as its generated double describes it. Implemented by generated
/// code only.
pub trait Signature: 'static {
    /// The method's arguments: `()`, the one argument, or a tuple of them.
    type Args<'a>;
    /// The method's return type, `Result<T, E>`.
    type Output: Outcome;
    /// The trait's name.
    const TRAIT: &'static str;
    /// The method's name.
    const METHOD: &'static str;
    /// `Trait#method`, as errors of real clients name the method.
    const KEY: &'static str;
}

/// A method's return type: `Result<T, E>` with `E: From<feign_core::Error>`.
pub trait Outcome {
    /// `T`.
    type Ok;
    /// `Ok(value)`.
    fn from_ok(value: Self::Ok) -> Self;
    /// `Err(E::from(error))`.
    fn from_error(error: Error) -> Self;
}

impl<T, E: From<Error>> Outcome for Result<T, E> {
    type Ok = T;

    fn from_ok(value: T) -> Self {
        Ok(value)
    }

    fn from_error(error: Error) -> Self {
        Err(E::from(error))
    }
}
