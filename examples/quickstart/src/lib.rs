//! The quickstart, as a library so a test can run exactly what `cargo run -p quickstart` runs.
//!
//! It starts the embedded Eureka registry and three `order-service` instances that register
//! through feign-eureka, builds a client from `#[feign_client("order-service")]` (no URL: the
//! name is resolved through Eureka and feign-lb), and shows in turn: calls spreading across the
//! instances, an interceptor adding the auth header the instances check, a custom ErrorDecoder
//! turning a 409 into a typed error, and an instance stopped in the middle of a burst of calls
//! with no call failing.

mod instance;
mod steps;

use std::error::Error as StdError;
use std::time::{Duration, Instant};

pub use instance::{Conflict, NewOrder, Order};
pub use steps::{run, Options, OrderError, OrderService, OrderServiceClient, Report};

/// What every step returns: a failed step says what it expected and what it saw.
pub type StepResult<T> = Result<T, Box<dyn StdError + Send + Sync>>;

/// The token the instances require and the client's interceptor adds.
pub const TOKEN: &str = "quickstart-token";

/// How often instances renew their lease: short, so the demonstration takes seconds, not
/// Eureka's default 30 s. The caller does not poll the registry: it watches it (push
/// discovery).
pub const REFRESH: Duration = Duration::from_millis(500);

/// Fails the step with `what` unless `ok`.
pub fn expect(ok: bool, what: impl Into<String>) -> StepResult<()> {
    if ok {
        Ok(())
    } else {
        Err(format!("expected {}", what.into()).into())
    }
}

/// Polls `done` until it holds, for at most 10 s; fails naming `what` was awaited.
pub async fn wait_for(mut done: impl FnMut() -> bool, what: &str) -> StepResult<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}").into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}
