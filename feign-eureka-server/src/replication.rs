//! Peer replication: the per-peer batching senders, and the batches peers send applied to the
//! local registry.

use std::net::IpAddr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::batch::{
    Action, BatchResponse, ItemResponse, ReplicationItem, ReplicationList, REPLICATION_HEADER,
};
use crate::config::ServerConfig;
use crate::peers::PeerResolver;
use crate::record;
use crate::registry::{Registry, RenewOutcome};
use crate::replicator::PeerQueues;
use crate::state::AppState;
use crate::validate;
use feign_eureka::model::InstanceStatus;

/// Applies a batch a peer at `peer` sent (JSON) item by item, each checked as a request of
/// its own would be: the answer to each, or why the batch cannot be read.
pub(crate) fn apply_batch(
    state: &AppState,
    peer: IpAddr,
    body: &[u8],
) -> Result<BatchResponse, serde_json::Error> {
    let list: ReplicationList = serde_json::from_slice(body)?;
    let limits = &state.registry.config.limits;
    let refused = |status_code| ItemResponse {
        status_code,
        response_entity: None,
    };
    let response_list = list
        .replication_list
        .into_iter()
        .map(|item| {
            let valid = validate::app_name(&item.app_name, limits)
                .and_then(|()| validate::instance_id(&item.id, limits))
                .and_then(|()| match &item.instance_info {
                    Some(info) => {
                        validate::registration(info, &item.app_name.to_ascii_uppercase(), limits)
                    }
                    None => Ok(()),
                });
            match valid {
                Ok(()) if !admits(state, peer, &item) => refused(503),
                Ok(()) => apply(&state.registry, item),
                Err(_) => refused(400),
            }
        })
        .collect();
    Ok(BatchResponse { response_list })
}

/// A replicated registration takes a token of the registration limit, as the peer's own
/// clients' registrations would; refused ones are answered 503, which peers take as
/// congestion, and come back through the instances' heartbeats.
fn admits(state: &AppState, peer: IpAddr, item: &ReplicationItem) -> bool {
    if item.action != Action::Register {
        return true;
    }
    let Some(limiter) = &state.limiter else {
        return true;
    };
    limiter.acquire(peer, state.registry.clock.now_ms()).is_ok()
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
            // An instance past the registry's bounds is refused for good (413), as to a client.
            Some(info) if record::app(&info) == app => match registry.register(info, true) {
                Ok(()) => found(true),
                Err(_) => ItemResponse {
                    status_code: 413,
                    response_entity: None,
                },
            },
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
                RenewOutcome::Renewed => found(true),
                RenewOutcome::NotFound => found(false),
                RenewOutcome::Conflict(info) => ItemResponse {
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

/// The HTTP client that talks to peers: replication and the start-up copy, with the peers' TLS
/// settings and resolver. Peers' redirects are not followed: a peer answers for itself. Each
/// request is bounded whole by the replication timeout, so a peer that trickles its answer (or
/// takes a batch slowly) holds a sender for that long at most.
pub(crate) fn peer_client(config: &ServerConfig) -> Result<reqwest::Client, feign_core::BoxError> {
    let mut builder = feign_core::client::reqwest_builder(
        Duration::from_secs(1),
        None,
        Some(config.replication_timeout),
    )
    .no_proxy();
    if let Some(tls) = &config.peer_tls {
        builder = feign_core::transport::HttpClientConfig::new()
            .tls(tls.clone())
            .apply(builder)?;
    }
    if let Some(PeerResolver(resolver)) = &config.peer_resolver {
        builder = builder.dns_resolver2(resolver.clone());
    }
    Ok(builder.build()?)
}

/// Starts one batching sender per peer, each with `client`. They stop when the registry is
/// dropped.
pub(crate) fn spawn_workers(
    registry: &Arc<Registry>,
    queues: PeerQueues,
    config: &ServerConfig,
    client: &reqwest::Client,
) -> Vec<tokio::task::JoinHandle<()>> {
    queues
        .into_iter()
        .map(|(peer, rx)| {
            let (base, authorization) = feign_core::redact::split_basic_auth(&peer);
            let worker = Worker {
                registry: Arc::downgrade(registry),
                client: client.clone(),
                url: format!("{base}peerreplication/batch/"),
                authorization,
                peer,
                batch_size: config.replication_batch_size.max(1),
                delay: config.replication_delay,
            };
            tokio::spawn(worker.run(rx))
        })
        .collect()
}

/// Why a batch did not reach a peer.
#[derive(Debug, thiserror::Error)]
enum DeliveryError {
    /// The batch could not be written as JSON.
    #[error("cannot encode the batch")]
    Encode(#[source] serde_json::Error),
    /// The request failed or the peer answered with an error status.
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    /// The peer's answer is not a batch response.
    #[error("unreadable batch response")]
    Decode(#[source] serde_json::Error),
}

struct Worker {
    registry: Weak<Registry>,
    peer: String,
    client: reqwest::Client,
    /// The batch URL, without the credentials the peer's URL held.
    url: String,
    /// The `Authorization` value the peer URL's credentials stand for.
    authorization: Option<http::HeaderValue>,
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
                    let error = &error as &(dyn std::error::Error + Send + Sync + 'static);
                    tracing::debug!(peer = %self.url, error, attempt, "replication batch failed");
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

    async fn post(&self, body: &ReplicationList) -> Result<BatchResponse, DeliveryError> {
        let body = serde_json::to_vec(body).map_err(DeliveryError::Encode)?;
        let mut request = self.client.post(&self.url);
        if let Some(authorization) = &self.authorization {
            request = request.header(http::header::AUTHORIZATION, authorization.clone());
        }
        let response = request
            .header(REPLICATION_HEADER, "true")
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)?;
        let bytes = response.bytes().await?;
        serde_json::from_slice(&bytes).map_err(DeliveryError::Decode)
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
                        if let Err(refused) = registry.register(theirs, true) {
                            tracing::debug!(%refused, "a peer's newer copy was not adopted");
                        }
                    }
                }
                _ => {}
            }
        }
    }
}
