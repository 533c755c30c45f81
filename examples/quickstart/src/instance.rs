//! One `order-service` instance: an axum server on an ephemeral 127.0.0.1 port that registers
//! itself with the registry through feign-eureka and deregisters when stopped.

use std::time::Instant;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use feign_eureka::{EurekaClient, InstanceConfig};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::{StepResult, REFRESH, TOKEN};

/// An order, as every instance serves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// The order's id.
    pub id: u64,
    /// What was ordered.
    pub item: String,
    /// The instance that answered.
    pub served_by: String,
}

/// What a caller sends to create an order.
#[derive(Debug, Serialize, Deserialize)]
pub struct NewOrder {
    /// What to order; `"sold-out"` conflicts.
    pub item: String,
}

/// The JSON body of a 409.
#[derive(Debug, Serialize, Deserialize)]
pub struct Conflict {
    /// Why the order cannot be placed.
    pub reason: String,
    /// How many are left.
    pub available: u32,
}

/// A running instance: its server task and its registration.
pub(crate) struct Instance {
    /// `127.0.0.1:PORT`, also its instance id.
    pub(crate) id: String,
    eureka: EurekaClient,
    stop: Option<oneshot::Sender<()>>,
    server: JoinHandle<std::io::Result<()>>,
}

#[derive(Clone)]
struct Shared {
    id: String,
}

impl Instance {
    /// Starts an instance and registers it with the registry at `eureka_url`.
    pub(crate) async fn start(
        eureka_url: &str,
        zone: &'static str,
        version: &'static str,
    ) -> StepResult<Instance> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let id = addr.to_string();
        let shared = Shared { id: id.clone() };
        let app = Router::new()
            .route("/orders/{id}", get(get_order))
            .route("/orders", post(create_order))
            .with_state(shared);
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        let eureka = EurekaClient::builder()
            .service_urls([eureka_url])
            .fetch_registry(false)
            .development()
            .instance(
                InstanceConfig::bound_to("order-service", addr)
                    .instance_id(id.clone())
                    .zone(zone)
                    .metadata("version", version)
                    .lease_renewal_interval(REFRESH)
                    .lease_expiration_duration(REFRESH * 4),
            )
            .start()
            .await?;
        Ok(Instance {
            id,
            eureka,
            stop: Some(stop),
            server,
        })
    }

    /// Deregisters from the registry, then stops serving; returns when the registry answered
    /// the deregistration.
    pub(crate) async fn stop(mut self) -> StepResult<Instant> {
        self.eureka.shutdown().await;
        let deregistered = Instant::now();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.server.await??;
        Ok(deregistered)
    }
}

fn authorized(headers: &HeaderMap) -> bool {
    headers
        .get("authorization")
        .is_some_and(|value| value.as_bytes() == format!("Bearer {TOKEN}").as_bytes())
}

async fn get_order(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<u64>,
) -> Response {
    if !authorized(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    Json(Order {
        id,
        item: format!("item-{id}"),
        served_by: shared.id,
    })
    .into_response()
}

async fn create_order(
    State(shared): State<Shared>,
    headers: HeaderMap,
    Json(new): Json<NewOrder>,
) -> Response {
    if !authorized(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    if new.item == "sold-out" {
        let conflict = Conflict {
            reason: "no stock left".to_owned(),
            available: 0,
        };
        return (StatusCode::CONFLICT, Json(conflict)).into_response();
    }
    let order = Order {
        id: 1,
        item: new.item,
        served_by: shared.id,
    };
    (StatusCode::CREATED, Json(order)).into_response()
}
