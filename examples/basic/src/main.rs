//! Run with `cargo run -p basic`.
//!
//! The README's `OrderService` client, called against an axum server this example starts on
//! 127.0.0.1 and stops when it is done. Exits with an error if any call misbehaves.

use std::error::Error as StdError;
use std::sync::Arc;

use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use feign_core::{feign_client, BearerAuth, Error, Retryer};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

/// An order, as the service returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// The order's id.
    pub id: u64,
    /// What was ordered.
    pub item: String,
    /// `open`, `new`, ...
    pub status: String,
}

/// What a caller sends to create an order.
#[derive(Debug, Serialize, Deserialize)]
pub struct NewOrder {
    /// What to order.
    pub item: String,
}

/// The order service's HTTP API.
#[feign_client("order-service", url = "http://127.0.0.1:8080", path = "/api")]
#[headers("Accept: application/json")]
pub trait OrderService {
    /// One order by id.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;

    /// Orders with a status, a page at a time.
    #[get("/orders")]
    async fn find(
        &self,
        #[query] status: Option<String>,
        #[query("page-size")] size: u32,
    ) -> Result<Vec<Order>, Error>;

    /// One order, or `None` when the service answers 404.
    #[get("/orders/{id}")]
    async fn try_get(&self, #[path] id: u64) -> Result<Option<Order>, Error>;

    /// Creates an order.
    #[post("/orders")]
    #[headers("X-Source: feign")]
    async fn create(
        &self,
        #[body] order: &NewOrder,
        #[header("X-Request-Id")] rid: &str,
    ) -> Result<Order, Error>;

    /// Cancels an order.
    #[delete("/orders/{id}")]
    async fn cancel(&self, #[path] id: u64) -> Result<(), Error>;
}

#[derive(Deserialize)]
struct FindParams {
    status: Option<String>,
    #[serde(rename = "page-size")]
    page_size: u32,
}

fn sample(id: u64, status: &str) -> Order {
    Order {
        id,
        item: format!("item-{id}"),
        status: status.to_owned(),
    }
}

/// The service the client talks to: a handful of routes over fixed data.
fn order_service() -> Router {
    Router::new()
        .route(
            "/api/orders/{id}",
            get(|Path(id): Path<u64>| async move {
                if id == 404 {
                    Err(StatusCode::NOT_FOUND)
                } else {
                    Ok(Json(sample(id, "open")))
                }
            })
            .delete(|Path(_): Path<u64>| async { StatusCode::NO_CONTENT }),
        )
        .route(
            "/api/orders",
            get(|Query(params): Query<FindParams>| async move {
                let status = params.status.unwrap_or_else(|| "any".to_owned());
                Json(
                    (1..=u64::from(params.page_size))
                        .map(|id| sample(id, &status))
                        .collect::<Vec<_>>(),
                )
            })
            .post(|headers: HeaderMap, Json(new): Json<NewOrder>| async move {
                let authorized = headers
                    .get("authorization")
                    .is_some_and(|value| value == "Bearer token");
                if !authorized {
                    return Err(StatusCode::UNAUTHORIZED);
                }
                Ok((
                    StatusCode::CREATED,
                    Json(Order {
                        id: 100,
                        item: new.item,
                        status: "new".to_owned(),
                    }),
                ))
            }),
        )
}

fn check(ok: bool, what: &str) -> Result<(), Box<dyn StdError>> {
    if ok {
        Ok(())
    } else {
        Err(format!("unexpected result: {what}").into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn StdError>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, order_service())
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    println!("order service listening on http://{address}");

    let orders = OrderServiceClient::builder()
        .url(format!("http://{address}")) // overrides the attribute's url
        .interceptor(BearerAuth::new("token"))
        .retryer(Retryer::default())
        .build()?;

    let order = orders.get_order(42).await?;
    println!("get_order(42)        -> {order:?}");
    check(order == sample(42, "open"), "get_order")?;

    let open = orders.find(Some("open".to_owned()), 2).await?;
    println!("find(open, 2)        -> {} orders", open.len());
    check(
        open.len() == 2 && open.iter().all(|order| order.status == "open"),
        "find",
    )?;

    let error = orders
        .get_order(404)
        .await
        .err()
        .ok_or("get_order(404) should fail")?;
    println!("get_order(404)       -> error: {error}");
    check(
        error.status() == Some(StatusCode::NOT_FOUND),
        "get_order(404)",
    )?;

    let missing = orders.try_get(404).await?;
    println!("try_get(404)         -> {missing:?}");
    check(missing.is_none(), "try_get")?;

    let created = orders
        .create(
            &NewOrder {
                item: "book".to_owned(),
            },
            "req-1",
        )
        .await?;
    println!("create(book)         -> {created:?}");
    check(created.id == 100 && created.item == "book", "create")?;

    let shared: Arc<dyn OrderService> = Arc::new(orders);
    shared.cancel(42).await?;
    println!("cancel(42)           -> ok");

    let _ = stop.send(());
    server.await??;
    println!("done");
    Ok(())
}
