//! Run with `cargo run -p config-example` (or `cargo run -p config-example -- <dir>` to read
//! another directory's `application.yml`).
//!
//! A client with a fixed URL and a load-balanced client, both configured from this example's
//! `application.yml` with Spring Cloud OpenFeign and LoadBalancer property names, called
//! against axum servers this example starts on 127.0.0.1 and stops when it is done. Exits with
//! an error if anything behaves other than the file says.

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::Router;
use feign_core::config::{Config, ConfigError};
use feign_core::{feign_client, Error};
use feign_lb::{LoadBalancer, ServiceInstance, StaticSupplier};
use serde_json::{json, Value};
use tokio::net::TcpListener;

type BoxError = Box<dyn StdError + Send + Sync>;

/// The order service, at the URL `application.yml` gives it.
#[feign_client("order-service", path = "/api")]
pub trait OrderService {
    /// One order, echoing the headers and query the server received.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Value, Error>;

    /// An order the server takes two seconds to find.
    #[get("/orders/slow")]
    async fn slow(&self) -> Result<Value, Error>;

    /// Cancels an order; the server answers 404 for unknown ones.
    #[delete("/orders/{id}")]
    async fn cancel(&self, #[path] id: u64) -> Result<(), Error>;
}

/// The inventory service, balanced across its instances.
#[feign_client("inventory")]
pub trait Inventory {
    /// Which instance answered.
    #[get("/whoami")]
    async fn whoami(&self) -> Result<String, Error>;
}

fn order_service() -> Router {
    Router::new()
        .route(
            "/api/orders/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(2)).await;
                axum::Json(json!({}))
            }),
        )
        .route(
            "/api/orders/{id}",
            get(
                |Path(id): Path<u64>, headers: HeaderMap, RawQuery(query): RawQuery| async move {
                    let team = headers.get("x-team").and_then(|v| v.to_str().ok());
                    axum::Json(json!({ "id": id, "team": team, "query": query }))
                },
            )
            .delete(|| async { StatusCode::NOT_FOUND }),
        )
}

/// Serves `router` on 127.0.0.1 until the returned sender is dropped; returns its port.
async fn serve(router: Router) -> Result<(u16, tokio::sync::oneshot::Sender<()>), BoxError> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    Ok((port, stop))
}

fn check(ok: bool, what: &str) -> Result<(), BoxError> {
    if ok {
        println!("ok: {what}");
        Ok(())
    } else {
        Err(format!("misbehaved: {what}").into())
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "feign_core=debug".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));

    let (orders_port, _stop_orders) = serve(order_service()).await?;
    let mut instances = Vec::new();
    let mut stops = Vec::new();
    for (name, zone) in [("a1", "zone-a"), ("a2", "zone-a"), ("b1", "zone-b")] {
        let (port, stop) =
            serve(Router::new().route("/whoami", get(move || async move { name }))).await?;
        instances.push(
            ServiceInstance::new("inventory", "127.0.0.1", port)
                .with_instance_id(name)
                .with_metadata("zone", zone),
        );
        stops.push(stop);
    }

    // application.yml, application.properties and the environment, as Spring Boot reads them;
    // `orders.port` fills the file's `${orders.port}` placeholder.
    let config = Config::load_from(&dir)?.set("orders.port", orders_port.to_string());
    let name = config
        .get("spring.application.name")?
        .map(|name| name.as_str())
        .unwrap_or_default();
    println!("read {}: spring.application.name = {name}", dir.display());

    let orders = OrderServiceClient::builder().config(&config)?.build()?;
    let order = orders.get_order(7).await?;
    check(
        order["team"] == "shop",
        "default-request-headers reach the server",
    )?;
    check(
        order["query"] == "source=config-example",
        "default-query-parameters reach the server",
    )?;
    let slow = orders.slow().await;
    check(
        slow.as_ref().is_err_and(Error::is_timeout),
        "read-timeout: 300 ms for order-service, over the default's 5000",
    )?;
    check(
        orders.cancel(404).await.is_ok(),
        "dismiss404: a 404 on cancel is not an error",
    )?;

    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::empty().with_instances("inventory", instances))
        .config(&config)?
        .build();
    let inventory = InventoryClient::builder()
        .load_balancer(lb)
        .config(&config)?
        .build()?;
    let mut answered: BTreeMap<String, usize> = BTreeMap::new();
    for _ in 0..20 {
        *answered.entry(inventory.whoami().await?).or_default() += 1;
    }
    println!("inventory answers: {answered:?}");
    check(
        answered.get("a1") == Some(&10) && answered.get("a2") == Some(&10),
        "zone-preference on zone-a, round robin across its two instances",
    )?;

    let typo = config.clone().set(
        "spring.cloud.openfeign.client.config.order-service.read-timout",
        "100",
    );
    let err = OrderServiceClient::builder().config(&typo).unwrap_err();
    println!("a misspelt key: {err}");
    let key = err.downcast_ref::<ConfigError>().and_then(ConfigError::key);
    check(
        err.is_config()
            && key == Some("spring.cloud.openfeign.client.config.order-service.read-timout"),
        "a misspelt key is a configuration error naming it",
    )?;
    println!("done");
    Ok(())
}
