//! `ResponseEntity<T>`: the decoded body with the status and headers it came with, against a
//! real loopback server.

use axum::extract::Path;
use axum::routing::{get, post};
use axum::{Json, Router};
use bytes::Bytes;
use feign_core::{feign_client, Error, ResponseEntity, Retryer};
use feign_test_support::{NewOrder, Order, Server};
use http::StatusCode;

/// Generates `EntitiesClient`.
#[feign_client("orders")]
pub(crate) trait Entities {
    /// An order with its head.
    #[get("/orders/{id}")]
    async fn order(&self, #[path] id: u64) -> Result<ResponseEntity<Order>, Error>;

    /// The same; 404 is `None`.
    #[get("/orders/{id}")]
    async fn find(&self, #[path] id: u64) -> Result<Option<ResponseEntity<Order>>, Error>;

    /// Creates an order: only the head matters.
    #[post("/orders")]
    async fn create(&self, #[body] order: &NewOrder) -> Result<ResponseEntity<()>, Error>;

    /// A text body with its head.
    #[get("/text/{name}")]
    async fn text(&self, #[path] name: &str) -> Result<ResponseEntity<String>, Error>;

    /// The same; 404 is `None`.
    #[get("/text/{name}")]
    async fn find_text(&self, #[path] name: &str) -> Result<Option<ResponseEntity<String>>, Error>;

    /// The raw body with its head.
    #[get("/text/{name}")]
    async fn raw(&self, #[path] name: &str) -> Result<ResponseEntity<Bytes>, Error>;
}

async fn client() -> (Server, EntitiesClient) {
    let router = Router::new()
        .route(
            "/orders/{id}",
            get(|Path(id): Path<u64>| async move {
                match id {
                    1 => Ok((
                        [("etag", "\"v7\""), ("x-total-count", "1")],
                        Json(Order {
                            id,
                            item: "tea".to_owned(),
                        }),
                    )),
                    2 => Err((StatusCode::OK, "{not json")),
                    500 => Err((StatusCode::INTERNAL_SERVER_ERROR, "it broke")),
                    _ => Err((StatusCode::NOT_FOUND, "no such order")),
                }
            }),
        )
        .route(
            "/orders",
            post(|| async { (StatusCode::CREATED, [("location", "/orders/3")], "{}") }),
        )
        .route(
            "/text/{name}",
            get(|Path(name): Path<String>| async move {
                match name.as_str() {
                    "hello" => Ok((
                        StatusCode::ACCEPTED,
                        [("x-lang", "en")],
                        Bytes::from("héllo"),
                    )),
                    "latin1" => Ok((
                        StatusCode::OK,
                        [("x-lang", "fr")],
                        Bytes::from(&b"h\xe9llo"[..]),
                    )),
                    _ => Err(StatusCode::NOT_FOUND),
                }
            }),
        );
    let server = Server::start(router).await;
    let client = EntitiesClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .build()
        .unwrap();
    (server, client)
}

#[tokio::test]
async fn a_decoded_body_comes_with_its_status_and_headers() {
    let (_server, client) = client().await;
    let entity = client.order(1).await.unwrap();
    assert_eq!(entity.status(), StatusCode::OK);
    assert_eq!(entity.headers()["etag"], "\"v7\"");
    assert_eq!(entity.headers()["x-total-count"], "1");
    assert_eq!(entity.headers()["content-type"], "application/json");
    assert_eq!(
        entity.into_body(),
        Order {
            id: 1,
            item: "tea".to_owned()
        }
    );

    let created = client
        .create(&NewOrder {
            item: "tea".to_owned(),
        })
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    assert_eq!(created.headers()["location"], "/orders/3");

    let text = client.text("hello").await.unwrap();
    assert_eq!(
        (
            text.status(),
            text.headers()["x-lang"].as_bytes(),
            text.body().as_str()
        ),
        (StatusCode::ACCEPTED, &b"en"[..], "héllo")
    );
    let raw = client.raw("latin1").await.unwrap();
    assert_eq!(raw.headers()["x-lang"], "fr");
    assert_eq!(raw.into_body(), &b"h\xe9llo"[..]);
}

#[tokio::test]
async fn errors_stay_errors_and_a_404_can_be_none() {
    let (_server, client) = client().await;
    let error = client.order(500).await.unwrap_err();
    assert_eq!(error.status(), Some(StatusCode::INTERNAL_SERVER_ERROR));
    assert_eq!(error.body().unwrap(), "it broke");

    let error = client.order(2).await.unwrap_err();
    assert!(error.is_decode(), "{error:?}");
    assert_eq!(error.method_key(), Some("Entities#order"));

    let error = client.text("latin1").await.unwrap_err();
    assert!(error.is_decode(), "invalid UTF-8: {error:?}");

    assert!(client.find(404).await.unwrap().is_none());
    assert_eq!(client.find(1).await.unwrap().unwrap().body().id, 1);
    assert!(client.find_text("gone").await.unwrap().is_none());
    assert_eq!(
        client.find_text("hello").await.unwrap().unwrap().status(),
        StatusCode::ACCEPTED
    );
    let error = client.order(404).await.unwrap_err();
    assert_eq!(error.status(), Some(StatusCode::NOT_FOUND));
}
