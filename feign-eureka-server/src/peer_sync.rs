//! Eureka's start-up sync (`PeerAwareInstanceRegistryImpl.syncUp`): a node that starts with
//! peers copies a peer's registry before it serves, instead of filling up from the heartbeats
//! that reach it over the next 30 s.

use std::time::Duration;

use feign_eureka::model::Applications;
use http::header::{ACCEPT, AUTHORIZATION};
use http::HeaderValue;

use crate::registry::Registry;
use crate::validate;

/// Copies the registry of the first peer that answers, as replicated registrations (so nothing
/// is sent back out); returns how many instances were taken. Each peer gets one request
/// bounded by `timeout`; a peer that fails is logged and the next one tried.
pub(crate) async fn copy_from_peers(
    registry: &Registry,
    client: &reqwest::Client,
    peers: &[String],
    timeout: Duration,
) -> usize {
    for peer in peers {
        let (peer, authorization) = feign_core::redact::split_basic_auth(peer);
        match fetch(client, &peer, authorization, timeout).await {
            Ok(apps) => {
                let copied = take(registry, apps);
                tracing::info!(%peer, instances = copied, "copied the registry of a peer at start");
                return copied;
            }
            Err(error) => {
                tracing::warn!(%peer, %error, "cannot copy the registry of a peer at start");
            }
        }
    }
    0
}

/// Why a peer's registry could not be read.
#[derive(Debug, thiserror::Error)]
enum SyncError {
    #[error("request failed: {0}")]
    Request(#[from] reqwest::Error),
    #[error("answered {0}")]
    Status(u16),
    #[error("unreadable registry: {0}")]
    Unreadable(#[from] serde_json::Error),
}

async fn fetch(
    client: &reqwest::Client,
    peer: &str,
    authorization: Option<HeaderValue>,
    timeout: Duration,
) -> Result<Applications, SyncError> {
    let mut request = client.get(format!("{peer}apps/"));
    if let Some(authorization) = authorization {
        request = request.header(AUTHORIZATION, authorization);
    }
    let response = request
        .header(ACCEPT, "application/json")
        .timeout(timeout)
        .send()
        .await?;
    let status = response.status();
    if !status.is_success() {
        return Err(SyncError::Status(status.as_u16()));
    }
    let body = response.bytes().await?;
    Ok(Applications::from_json(&body)?)
}

/// Registers every instance that passes this server's own checks; returns the count.
fn take(registry: &Registry, apps: Applications) -> usize {
    let limits = &registry.config.limits;
    let mut copied = 0;
    for app in apps.applications {
        for info in app.instances {
            let taken = validate::registration(&info, &app.name, limits)
                .map_err(|reason| reason.to_string())
                .and_then(|()| registry.register(info, true).map_err(|r| r.to_string()));
            match taken {
                Ok(()) => copied += 1,
                Err(reason) => {
                    tracing::warn!(app = %app.name, %reason, "a peer's instance was not copied");
                }
            }
        }
    }
    copied
}
