//! The README's `OrderService`, declared with `#[feign_client]` and called against a real axum
//! server on 127.0.0.1 that parses what it receives with its own extractors.

use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use feign_core::interceptor::interceptor_fn;
use feign_core::{feign_client, Error};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Order {
    id: u64,
    item: String,
    status: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct NewOrder {
    item: String,
}

#[feign_client("order-service", url = "http://127.0.0.1:8080", path = "/api")]
#[headers("Accept: application/json")]
trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;

    #[get("/orders")]
    async fn find(
        &self,
        #[query] status: Option<String>,
        #[query("page-size")] size: u32,
    ) -> Result<Vec<Order>, Error>;

    #[get("/orders/{id}")]
    async fn try_get(&self, #[path] id: u64) -> Result<Option<Order>, Error>; // 404 -> None

    #[post("/orders")]
    #[headers("X-Source: feign")]
    async fn create(
        &self,
        #[body] order: &NewOrder,
        #[header("X-Request-Id")] rid: &str,
    ) -> Result<Order, Error>;

    #[delete("/orders/{id}")]
    async fn cancel(&self, #[path] id: u64) -> Result<(), Error>;

    /// Default methods stay in the trait and run on the generated client.
    async fn get_pair(&self, first: u64, second: u64) -> Result<(Order, Order), Error> {
        Ok((self.get_order(first).await?, self.get_order(second).await?))
    }
}

#[derive(Debug, Deserialize)]
struct FindParams {
    status: Option<String>,
    #[serde(rename = "page-size")]
    page_size: u32,
}

/// What the server saw of the calls that matter to the assertions.
#[derive(Default)]
struct Seen {
    cancelled: Vec<u64>,
    find_queries: Vec<(Option<String>, u32)>,
    create_headers: Vec<HeaderMap>,
}

fn order(id: u64) -> Order {
    Order {
        id,
        item: format!("item-{id}"),
        status: "open".to_owned(),
    }
}

async fn order_server() -> (String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (for_find, for_create, for_cancel) = (seen.clone(), seen.clone(), seen.clone());
    let router = Router::new()
        .route(
            "/api/orders/{id}",
            get(|Path(id): Path<u64>, headers: HeaderMap| async move {
                assert_eq!(headers["accept"], "application/json");
                if id == 404 {
                    Err(StatusCode::NOT_FOUND)
                } else {
                    Ok(Json(order(id)))
                }
            })
            .delete(move |Path(id): Path<u64>| async move {
                for_cancel.lock().unwrap().cancelled.push(id);
                StatusCode::NO_CONTENT
            }),
        )
        .route(
            "/api/orders",
            get(move |Query(params): Query<FindParams>| async move {
                for_find
                    .lock()
                    .unwrap()
                    .find_queries
                    .push((params.status.clone(), params.page_size));
                let orders = (1..=u64::from(params.page_size.min(3)))
                    .map(order)
                    .collect::<Vec<_>>();
                Json(orders)
            })
            .post(
                move |headers: HeaderMap, Json(new): Json<NewOrder>| async move {
                    for_create.lock().unwrap().create_headers.push(headers);
                    (
                        StatusCode::CREATED,
                        Json(Order {
                            id: 100,
                            item: new.item,
                            status: "new".to_owned(),
                        }),
                    )
                },
            ),
        );
    (feign_test_support::serve(router).await, seen)
}

fn client(base: &str) -> OrderServiceClient {
    OrderServiceClient::builder()
        .url(base) // overrides the attribute's url
        .build()
        .expect("a valid client")
}

#[tokio::test]
async fn every_method_of_the_readme_trait_round_trips() {
    let (base, seen) = order_server().await;
    let orders = client(&base);

    assert_eq!(orders.get_order(42).await.unwrap(), order(42));

    let found = orders.find(Some("open".to_owned()), 2).await.unwrap();
    assert_eq!(found, vec![order(1), order(2)]);
    assert!(orders.find(None, 1).await.unwrap().len() == 1);
    assert_eq!(
        seen.lock().unwrap().find_queries,
        vec![(Some("open".to_owned()), 2), (None, 1)]
    );

    assert_eq!(orders.try_get(7).await.unwrap(), Some(order(7)));
    assert_eq!(orders.try_get(404).await.unwrap(), None);
    let missing = orders.get_order(404).await.unwrap_err();
    assert_eq!(missing.status(), Some(StatusCode::NOT_FOUND));
    assert_eq!(missing.method_key(), Some("OrderService#get_order"));

    let created = orders
        .create(
            &NewOrder {
                item: "book".to_owned(),
            },
            "rid-1",
        )
        .await
        .unwrap();
    assert_eq!(
        created,
        Order {
            id: 100,
            item: "book".to_owned(),
            status: "new".to_owned()
        }
    );
    let headers = seen
        .lock()
        .unwrap()
        .create_headers
        .pop()
        .expect("create reached the server");
    assert_eq!(headers["x-request-id"], "rid-1");
    assert_eq!(headers["x-source"], "feign");
    assert_eq!(headers["accept"], "application/json");
    assert_eq!(headers["content-type"], "application/json");

    orders.cancel(9).await.unwrap();
    assert_eq!(seen.lock().unwrap().cancelled, vec![9]);
}

#[tokio::test]
async fn default_methods_are_kept_and_call_the_generated_ones() {
    let (base, _) = order_server().await;
    let (first, second) = client(&base).get_pair(1, 2).await.unwrap();
    assert_eq!((first.id, second.id), (1, 2));
}

fn assert_send<T: Send>(_: &T) {}

#[tokio::test]
async fn the_client_is_usable_as_arc_dyn_trait_with_send_futures() {
    let (base, _) = order_server().await;
    let shared: Arc<dyn OrderService> = Arc::new(client(&base));
    let future = shared.get_order(5);
    assert_send(&future);
    assert_eq!(future.await.unwrap().id, 5);

    let tasks: Vec<_> = (1..=4)
        .map(|id| {
            let shared = shared.clone();
            tokio::spawn(async move { shared.get_order(id).await })
        })
        .collect();
    for (id, task) in (1..=4).zip(tasks) {
        assert_eq!(task.await.unwrap().unwrap().id, id);
    }
}

#[tokio::test]
async fn interceptors_see_the_method_key_and_route() {
    let (base, _) = order_server().await;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let log = calls.clone();
    let orders = OrderServiceClient::builder()
        .url(base)
        .interceptor(interceptor_fn(move |request| {
            log.lock()
                .unwrap()
                .push((request.method_key(), request.route()));
            Ok(())
        }))
        .build()
        .unwrap();
    orders.get_order(1).await.unwrap();
    orders.cancel(1).await.unwrap();
    assert_eq!(
        *calls.lock().unwrap(),
        vec![
            ("OrderService#get_order", "GET /orders/{id}"),
            ("OrderService#cancel", "DELETE /orders/{id}")
        ]
    );
}

#[tokio::test]
async fn the_attribute_url_is_used_when_the_builder_sets_none() {
    let (base, _) = order_server().await;

    #[feign_client("order-service", url = "http://127.0.0.1:1", path = "/api")]
    #[headers("Accept: application/json")]
    trait Unreachable {
        #[get("/orders/{id}")]
        async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;
    }

    let error = UnreachableClient::builder()
        .retryer(feign_core::Retryer::never())
        .build()
        .unwrap()
        .get_order(1)
        .await
        .unwrap_err();
    assert!(error.is_connect(), "{error:?}");
    let order = UnreachableClient::builder()
        .url(base)
        .build()
        .unwrap()
        .get_order(1)
        .await
        .unwrap();
    assert_eq!(order.id, 1);
}
