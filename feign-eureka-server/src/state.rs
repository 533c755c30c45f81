//! What the HTTP handlers share.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::rate::RateLimiter;
use crate::registry::Registry;

/// Shared by every handler.
#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) registry: Arc<Registry>,
    pub(crate) limiter: Option<RateLimiter>,
    pub(crate) shutting_down: AtomicBool,
    pub(crate) started_ms: u64,
    pub(crate) url: String,
}
