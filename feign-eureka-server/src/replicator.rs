//! The per-peer queues replicated operations wait in until a sender takes them.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc;

use crate::batch::ReplicationItem;

/// Fans replicated operations out to one queue per peer; without peers it drops them.
#[derive(Debug, Default)]
pub(crate) struct Replicator {
    peers: Vec<(String, mpsc::Sender<ReplicationItem>)>,
    dropped: AtomicU64,
}

/// The receiving ends, handed to [`crate::replication::spawn_workers`] once the registry exists.
pub(crate) type PeerQueues = Vec<(String, mpsc::Receiver<ReplicationItem>)>;

impl Replicator {
    /// Queues for `peers` (normalized base URLs ending in `/`).
    pub(crate) fn new(peers: &[String], capacity: usize) -> (Self, PeerQueues) {
        let mut senders = Vec::new();
        let mut receivers = Vec::new();
        for peer in peers {
            let (tx, rx) = mpsc::channel(capacity.max(1));
            senders.push((peer.clone(), tx));
            receivers.push((peer.clone(), rx));
        }
        let replicator = Self {
            peers: senders,
            dropped: AtomicU64::new(0),
        };
        (replicator, receivers)
    }

    /// The peers' base URLs.
    pub(crate) fn peers(&self) -> impl Iterator<Item = &str> {
        self.peers.iter().map(|(url, _)| url.as_str())
    }

    /// Queues `item` for every peer without waiting; a full queue drops it (heartbeats later
    /// repair what a dropped item missed).
    pub(crate) fn send(&self, item: ReplicationItem) {
        for (_, tx) in &self.peers {
            if tx.try_send(item.clone()).is_err() {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Queues `item` for the peer at `peer` only.
    pub(crate) fn send_to(&self, peer: &str, item: ReplicationItem) {
        for (url, tx) in &self.peers {
            if url == peer && tx.try_send(item.clone()).is_err() {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Items dropped because a peer's queue was full or closed.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
