//! A loopback service that slows down with its load, as an overloaded server does: what the
//! adaptive concurrency limit is measured against.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::routing::any;
use axum::Router;

/// What a [`loaded_service`] saw. Clones share it.
#[derive(Clone, Debug, Default)]
pub struct LoadedService {
    /// Requests received.
    pub requests: Arc<AtomicUsize>,
    /// Requests being answered right now.
    pub in_flight: Arc<AtomicUsize>,
    /// The most requests answered at once.
    pub max_in_flight: Arc<AtomicUsize>,
}

#[derive(Clone)]
struct Load {
    seen: LoadedService,
    base: Duration,
    per_call: Duration,
}

/// Serves `/calls/{mode}` (any method, so [`CallsClient`](crate::CallsClient) calls it) on
/// 127.0.0.1 and returns its base URL: each request is answered 200 with the mode after
/// `base + per_call × n`, `n` the requests in flight when it arrived, itself included.
pub async fn loaded_service(base: Duration, per_call: Duration) -> (String, LoadedService) {
    let seen = LoadedService::default();
    let app = Router::new()
        .route("/calls/{mode}", any(answer))
        .with_state(Load {
            seen: seen.clone(),
            base,
            per_call,
        });
    (crate::serve(app).await, seen)
}

async fn answer(State(load): State<Load>, Path(mode): Path<String>) -> String {
    let seen = &load.seen;
    seen.requests.fetch_add(1, Ordering::SeqCst);
    let n = seen.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    seen.max_in_flight.fetch_max(n, Ordering::SeqCst);
    let calls = u32::try_from(n).unwrap_or(u32::MAX);
    // Counted out even when the client gives up and the handler is dropped.
    let _leaving = Leaving(&seen.in_flight);
    tokio::time::sleep(load.base + load.per_call * calls).await;
    mode
}

struct Leaving<'a>(&'a AtomicUsize);

impl Drop for Leaving<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
