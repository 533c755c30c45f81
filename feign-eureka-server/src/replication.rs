//! Peer replication: the `peerreplication/batch` wire types and the per-peer batching senders.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::config::ServerConfig;
use super::record;
use super::registry::Registry;
use feign_eureka::model::{InstanceInfo, InstanceStatus};

/// The header marking a call as replicated; receivers neither re-replicate nor apply the
/// client-only override rules.
pub(crate) const REPLICATION_HEADER: &str = "x-netflix-discovery-replication";

/// One replicated operation (`ReplicationInstance`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReplicationItem {
    pub(crate) app_name: String,
    pub(crate) id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_dirty_timestamp: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) overridden_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) instance_info: Option<InstanceInfo>,
    pub(crate) action: Action,
}

/// `PeerAwareInstanceRegistryImpl.Action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Action {
    Heartbeat,
    Register,
    Cancel,
    StatusUpdate,
    DeleteStatusOverride,
}

impl ReplicationItem {
    fn new(app: &str, id: &str, action: Action) -> Self {
        Self {
            app_name: app.to_owned(),
            id: id.to_owned(),
            last_dirty_timestamp: None,
            overridden_status: None,
            status: None,
            instance_info: None,
            action,
        }
    }

    fn about(info: &InstanceInfo, action: Action) -> Self {
        let mut item = Self::new(record::app(info), &record::id(info), action);
        item.last_dirty_timestamp = Some(record::ldt(info));
        item.status = Some(record::status(info).as_str().to_owned());
        item
    }

    /// A `Register` of `info`.
    pub(crate) fn register(info: &InstanceInfo) -> Self {
        let mut item = Self::about(info, Action::Register);
        item.instance_info = Some(info.clone());
        item
    }

    /// A `Heartbeat` for the stored `info`.
    pub(crate) fn heartbeat(info: &InstanceInfo, admin: Option<InstanceStatus>) -> Self {
        let mut item = Self::about(info, Action::Heartbeat);
        item.overridden_status = admin.map(|s| s.as_str().to_owned());
        item
    }

    /// A `Cancel`.
    pub(crate) fn cancel(app: &str, id: &str) -> Self {
        Self::new(app, id, Action::Cancel)
    }

    /// A `StatusUpdate` to `status`.
    pub(crate) fn status_update(
        info: &InstanceInfo,
        status: InstanceStatus,
        ldt: Option<u64>,
    ) -> Self {
        let mut item = Self::about(info, Action::StatusUpdate);
        item.status = Some(status.as_str().to_owned());
        item.last_dirty_timestamp = ldt;
        item
    }

    /// A `DeleteStatusOverride` leaving `status`.
    pub(crate) fn delete_override(
        info: &InstanceInfo,
        status: InstanceStatus,
        ldt: Option<u64>,
    ) -> Self {
        let mut item = Self::about(info, Action::DeleteStatusOverride);
        item.status = Some(status.as_str().to_owned());
        item.last_dirty_timestamp = ldt;
        item
    }
}

/// The batch request body.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReplicationList {
    #[serde(default)]
    pub(crate) replication_list: Vec<ReplicationItem>,
}

/// One item's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ItemResponse {
    pub(crate) status_code: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) response_entity: Option<InstanceInfo>,
}

/// The batch response body.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BatchResponse {
    #[serde(default)]
    pub(crate) response_list: Vec<ItemResponse>,
}

/// Applies one replicated item to the local registry and answers like Eureka's resources.
pub(crate) fn apply(registry: &Registry, item: ReplicationItem) -> ItemResponse {
    let app = item.app_name.to_ascii_uppercase();
    let status = item
        .status
        .as_deref()
        .map(InstanceStatus::from_wire)
        .unwrap_or(InstanceStatus::Unknown);
    let found = |ok: bool| ItemResponse {
        status_code: if ok { 200 } else { 404 },
        response_entity: None,
    };
    match item.action {
        Action::Register => match item.instance_info {
            Some(info) if record::app(&info) == app => {
                registry.register(info, true);
                found(true)
            }
            _ => ItemResponse {
                status_code: 400,
                response_entity: None,
            },
        },
        Action::Heartbeat => {
            let overridden = item
                .overridden_status
                .as_deref()
                .map(InstanceStatus::from_wire);
            match registry.renew(&app, &item.id, item.last_dirty_timestamp, overridden, true) {
                super::registry::RenewOutcome::Renewed => found(true),
                super::registry::RenewOutcome::NotFound => found(false),
                super::registry::RenewOutcome::Conflict(info) => ItemResponse {
                    status_code: 409,
                    response_entity: Some(*info),
                },
            }
        }
        Action::Cancel => found(registry.cancel(&app, &item.id, true)),
        Action::StatusUpdate => {
            found(registry.update_status(&app, &item.id, status, item.last_dirty_timestamp, true))
        }
        Action::DeleteStatusOverride => found(registry.delete_status_override(
            &app,
            &item.id,
            status,
            item.last_dirty_timestamp,
            true,
        )),
    }
}

/// Fans replicated operations out to one queue per peer; without peers it drops them.
#[derive(Debug, Default)]
pub(crate) struct Replicator {
    peers: Vec<(String, mpsc::Sender<ReplicationItem>)>,
    dropped: AtomicU64,
}

/// The receiving ends, handed to [`spawn_workers`] once the registry exists.
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

/// Starts one batching sender per peer. They stop when the registry is dropped.
pub(crate) fn spawn_workers(
    registry: &Arc<Registry>,
    queues: PeerQueues,
    config: &ServerConfig,
) -> Vec<tokio::task::JoinHandle<()>> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(1))
        .timeout(config.replication_timeout)
        .build();
    let Ok(client) = client else {
        tracing::error!("cannot build the replication HTTP client; replication is off");
        return Vec::new();
    };
    queues
        .into_iter()
        .map(|(peer, rx)| {
            let worker = Worker {
                registry: Arc::downgrade(registry),
                client: client.clone(),
                url: format!("{peer}peerreplication/batch/"),
                peer,
                batch_size: config.replication_batch_size.max(1),
                delay: config.replication_delay,
            };
            tokio::spawn(worker.run(rx))
        })
        .collect()
}

struct Worker {
    registry: Weak<Registry>,
    peer: String,
    client: reqwest::Client,
    url: String,
    batch_size: usize,
    delay: Duration,
}

impl Worker {
    async fn run(self, mut rx: mpsc::Receiver<ReplicationItem>) {
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            let deadline = Instant::now() + self.delay;
            while batch.len() < self.batch_size {
                match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Ok(Some(item)) => batch.push(item),
                    Ok(None) | Err(_) => break,
                }
            }
            self.deliver(batch).await;
        }
    }

    async fn deliver(&self, batch: Vec<ReplicationItem>) {
        let body = ReplicationList {
            replication_list: batch,
        };
        for attempt in 0..3u32 {
            match self.post(&body).await {
                Ok(answer) => {
                    self.follow_up(&body.replication_list, answer);
                    return;
                }
                Err(error) => {
                    tracing::debug!(peer = %self.url, %error, attempt, "replication batch failed");
                    tokio::time::sleep(Duration::from_millis(100 << attempt)).await;
                }
            }
        }
        tracing::warn!(
            peer = %self.url,
            items = body.replication_list.len(),
            "peer unreachable; dropped a replication batch (heartbeats resynchronize it later)"
        );
    }

    async fn post(&self, body: &ReplicationList) -> Result<BatchResponse, String> {
        let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let response = self
            .client
            .post(&self.url)
            .header(REPLICATION_HEADER, "true")
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| e.to_string())?;
        let bytes = response.bytes().await.map_err(|e| e.to_string())?;
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
    }

    /// Eureka's follow-ups: a heartbeat the peer does not know becomes a register of our copy;
    /// a 409 carrying a newer copy is adopted.
    fn follow_up(&self, sent: &[ReplicationItem], answer: BatchResponse) {
        let Some(registry) = self.registry.upgrade() else {
            return;
        };
        for (item, response) in sent.iter().zip(answer.response_list) {
            if item.action != Action::Heartbeat {
                continue;
            }
            let app = item.app_name.to_ascii_uppercase();
            match (response.status_code, response.response_entity) {
                (404, _) => {
                    if let Some(stored) = registry.stored(&app, &item.id) {
                        registry
                            .replicator()
                            .send_to(&self.peer, ReplicationItem::register(&stored));
                    }
                }
                (409, Some(theirs)) => {
                    let ours = registry.stored(&app, &item.id).map(|i| record::ldt(&i));
                    if ours.is_some_and(|ours| record::ldt(&theirs) > ours) {
                        registry.register(theirs, true);
                    }
                }
                _ => {}
            }
        }
    }
}
