//! What the HTTP handlers share.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::listing::ListingCache;
use crate::offload::Offload;
use crate::peers::Peers;
use crate::rate::RateLimiter;
use crate::registry::Registry;
use crate::watch::Watches;

/// Shared by every handler.
#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) registry: Arc<Registry>,
    pub(crate) limiter: Option<RateLimiter>,
    /// Registration bytes by client address.
    pub(crate) bytes_limiter: Option<RateLimiter>,
    /// Metadata updates by application and instance id.
    pub(crate) metadata_limiter: Option<RateLimiter<(String, String)>>,
    pub(crate) shutting_down: AtomicBool,
    pub(crate) started_ms: u64,
    pub(crate) url: String,
    /// Who is a peer: the replication header and batches count only from one.
    pub(crate) peers: Peers,
    /// The dashboard's rendered pages of instances.
    pub(crate) dashboard: ListingCache,
    /// Push discovery's long polls.
    pub(crate) watches: Watches,
    /// Where heavy work runs: parsing bodies, rendering documents and pages.
    pub(crate) offload: Offload,
}
