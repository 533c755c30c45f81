//! The call pipeline end to end against a real server on 127.0.0.1, through a client written
//! exactly as `#[feign_client]` generates it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::{any, get, post};
use axum::{Json, Router};
use feign_core::codec::error_decoder_fn;
use feign_core::interceptor::{interceptor_fn, DefaultHeaders, RequestId};
use feign_core::{BearerAuth, Error, RequestInterceptor, RequestTemplate, Retryer};
use feign_test_support::{NewOrder, Order, OrderClient, Server};
use serde::Serialize;

fn orders() -> Router {
    Router::new()
        .route(
            "/api/orders/{id}",
            get(|Path(id): Path<String>| async move {
                match id.parse::<u64>() {
                    Ok(404) => Err(StatusCode::NOT_FOUND),
                    Ok(id) => Ok(Json(Order {
                        id,
                        item: format!("item-{id}"),
                    })),
                    Err(_) => Ok(Json(Order { id: 0, item: id })),
                }
            })
            .delete(|| async { StatusCode::NO_CONTENT }),
        )
        .route(
            "/api/orders",
            post(|Json(body): Json<serde_json::Value>| async move {
                let item = body["item"].as_str().unwrap_or_default().to_owned();
                if item == "taken" {
                    return Err((
                        StatusCode::CONFLICT,
                        Json(serde_json::json!({"code": "taken"})),
                    ));
                }
                Ok((StatusCode::CREATED, Json(Order { id: 7, item })))
            })
            .get(|uri: http::Uri| async move { uri.query().unwrap_or_default().to_owned() }),
        )
}

fn client(server: &Server) -> OrderClient {
    OrderClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .build()
        .unwrap()
}

#[tokio::test]
async fn get_post_delete_and_optional_round_trip() {
    let server = Server::start(orders()).await;
    let client = client(&server);

    assert_eq!(
        client.get_order(&42).await.unwrap(),
        Order {
            id: 42,
            item: "item-42".into()
        }
    );
    assert_eq!(client.try_get(404).await.unwrap(), None);
    assert_eq!(client.try_get(5).await.unwrap().map(|o| o.id), Some(5));
    let created = client
        .create(
            &NewOrder {
                item: "book".into(),
            },
            "rid-1",
        )
        .await
        .unwrap();
    assert_eq!(
        created,
        Order {
            id: 7,
            item: "book".into()
        }
    );
    client.cancel("9").await.unwrap();

    let recorded = server.recorded();
    let targets: Vec<_> = recorded
        .iter()
        .map(|r| format!("{} {}", r.method, r.target))
        .collect();
    assert_eq!(
        targets,
        [
            "GET /api/orders/42",
            "GET /api/orders/404",
            "GET /api/orders/5",
            "POST /api/orders",
            "DELETE /api/orders/9"
        ]
    );
    let post = &recorded[3];
    assert_eq!(post.headers["x-source"], "feign");
    assert_eq!(post.headers["x-request-id"], "rid-1");
    assert_eq!(post.headers["accept"], "application/json");
    assert_eq!(post.headers["content-type"], "application/json");
    assert_eq!(&post.body[..], br#"{"item":"book"}"#);
}

#[tokio::test]
async fn a_404_is_an_error_when_the_return_type_is_not_optional() {
    let server = Server::start(orders()).await;
    let err = client(&server).get_order(&404).await.unwrap_err();
    assert!(err.is_status());
    assert_eq!(err.status(), Some(StatusCode::NOT_FOUND));
    assert_eq!(err.method_key(), Some("OrderService#get_order"));
    assert_eq!(
        err.url(),
        Some(format!("{}/api/orders/404", server.url()).as_str())
    );
}

#[tokio::test]
async fn query_pairs_literals_options_and_collections() {
    let server = Server::start(orders()).await;
    let client = client(&server);
    let query = client
        .find(&[("page-size", "10")], Some("open"), &["a", "b c"])
        .await
        .unwrap();
    assert_eq!(
        query,
        "fixed=a%20b&status=open&tag=a&tag=b%20c&page-size=10"
    );
    let query = client.find(&[], None, &[]).await.unwrap();
    assert_eq!(query, "fixed=a%20b");
}

#[derive(Serialize)]
struct Filter {
    status: Option<String>,
    tags: Vec<&'static str>,
    limit: u32,
    skipped: Option<u32>,
}

#[tokio::test]
async fn query_map_omits_none_and_explodes_sequences() {
    let server = Server::start(orders()).await;
    let client = client(&server);
    let filter = Filter {
        status: Some("a&b".into()),
        tags: vec!["x", "y"],
        limit: 3,
        skipped: None,
    };
    let query = client.find_map(&filter).await.unwrap();
    assert_eq!(query, "fixed=a%20b&limit=3&status=a%26b&tags=x&tags=y");
    let mut map = BTreeMap::new();
    map.insert("k=1", "v#2");
    assert_eq!(
        client.find_map(&map).await.unwrap(),
        "fixed=a%20b&k%3D1=v%232"
    );
}

#[tokio::test]
async fn form_and_raw_bodies() {
    let server = Server::start(Router::new().route(
        "/api/orders",
        post(|body: bytes::Bytes| async move { body }),
    ))
    .await;
    let client = client(&server);
    #[derive(Serialize)]
    struct Login {
        user: &'static str,
        pass: &'static str,
    }
    let echoed = client
        .create_form(&Login {
            user: "a b",
            pass: "x&y=z",
        })
        .await
        .unwrap();
    assert_eq!(&echoed[..], b"user=a+b&pass=x%26y%3Dz");
    client
        .create_with_headers(&vec![("X-A", "1")])
        .await
        .unwrap();
    let recorded = server.recorded();
    assert_eq!(
        recorded[0].headers["content-type"],
        "application/x-www-form-urlencoded"
    );
    assert_eq!(&recorded[1].body[..], b"raw body");
    assert_eq!(recorded[1].headers["x-a"], "1");
}

#[tokio::test]
async fn string_bytes_and_raw_response_return_types() {
    let router = Router::new().route(
        "/api/raw",
        get(|| async {
            (
                StatusCode::ACCEPTED,
                [("x-answer", "42"), ("content-type", "application/json")],
                r#"{"ok":true}"#,
            )
        }),
    );
    let server = Server::start(router.merge(orders())).await;
    let client = client(&server);
    let response = client.raw().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    assert_eq!(response.headers()["x-answer"], "42");
    assert_eq!(response.text().unwrap(), r#"{"ok":true}"#);
    assert_eq!(
        client.raw_json().await.unwrap(),
        serde_json::json!({"ok": true})
    );
    assert_eq!(
        client.get_order_text("7").await.unwrap(),
        r#"{"id":7,"item":"item-7"}"#
    );
}

struct Recorder {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

#[feign_core::async_trait]
impl RequestInterceptor for Recorder {
    async fn intercept(&self, request: &mut RequestTemplate) -> Result<(), Error> {
        tokio::task::yield_now().await;
        self.log.lock().unwrap().push(format!(
            "{} {} {}",
            self.name,
            request.method_key(),
            request.path_and_query()
        ));
        Ok(())
    }
}

#[tokio::test]
async fn interceptors_run_in_order_and_can_change_everything() {
    let server = Server::start(Router::new().fallback(any(|| async { "{}" }))).await;
    let log = Arc::new(Mutex::new(Vec::new()));
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(Recorder {
            name: "first",
            log: log.clone(),
        })
        .interceptor(interceptor_fn(|req: &mut RequestTemplate| {
            req.set_method(http::Method::PUT);
            req.set_path_and_query("/changed/path")?;
            req.append_query("added", "a b");
            req.set_body("replaced");
            req.insert_header("x-tenant", "acme")
        }))
        .interceptor(Recorder {
            name: "third",
            log: log.clone(),
        })
        .interceptor(BearerAuth::new("s3cr3t"))
        .interceptor(
            DefaultHeaders::new()
                .header("x-default", "d")
                .header("accept", "text/plain"),
        )
        .interceptor(RequestId::new())
        .build()
        .unwrap();
    client.cancel("1").await.unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "first OrderService#cancel /api/orders/1",
            "third OrderService#cancel /changed/path?added=a%20b"
        ]
    );
    let seen = &server.recorded()[0];
    assert_eq!(seen.method, http::Method::PUT);
    assert_eq!(seen.target, "/changed/path?added=a%20b");
    assert_eq!(&seen.body[..], b"replaced");
    assert_eq!(seen.headers["x-tenant"], "acme");
    assert_eq!(seen.headers["authorization"], "Bearer s3cr3t");
    assert_eq!(seen.headers["x-default"], "d");
    assert_eq!(
        seen.headers["accept"], "application/json",
        "default headers do not replace the method's"
    );
    assert_eq!(seen.headers["x-request-id"].len(), 32);
}

#[tokio::test]
async fn an_interceptor_error_stops_the_call_before_any_connection() {
    let server = Server::start(orders()).await;
    let client = OrderClient::builder()
        .url(server.url())
        .interceptor(interceptor_fn(|_: &mut RequestTemplate| {
            Err(Error::interceptor("no token"))
        }))
        .build()
        .unwrap();
    let err = client.get_order(&1).await.unwrap_err();
    assert!(err.is_interceptor(), "{err:?}");
    assert_eq!(err.method_key(), Some("OrderService#get_order"));
    assert_eq!(server.connection_count(), 0);
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("order {0} already exists")]
struct Conflict(String);

#[tokio::test]
async fn a_user_error_decoder_returns_the_users_typed_error() {
    let server = Server::start(orders()).await;
    let client = OrderClient::builder()
        .url(server.url())
        .error_decoder(error_decoder_fn(
            |key: &str, response: feign_core::Response| {
                if response.status() == StatusCode::CONFLICT {
                    let body: serde_json::Value = response.json().unwrap_or_default();
                    Error::custom(Conflict(format!(
                        "{key}:{}",
                        body["code"].as_str().unwrap_or("?")
                    )))
                } else {
                    feign_core::ErrorDecoder::decode(
                        &feign_core::codec::DefaultErrorDecoder::default(),
                        key,
                        response,
                    )
                }
            },
        ))
        .build()
        .unwrap();
    let err = client
        .create(
            &NewOrder {
                item: "taken".into(),
            },
            "r",
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.downcast_ref::<Conflict>(),
        Some(&Conflict("OrderService#create:taken".into()))
    );
    assert!(
        err.to_string()
            .contains("order OrderService#create:taken already exists"),
        "{err}"
    );
    assert_eq!(err.method_key(), Some("OrderService#create"));
    assert!(std::error::Error::source(&err).is_some());
}

#[tokio::test]
async fn the_default_error_decoder_keeps_8_kib_of_body_and_retry_after() {
    let big = "x".repeat(100_000);
    let router = Router::new().route(
        "/api/raw",
        get(move || {
            let big = big.clone();
            async move { (StatusCode::SERVICE_UNAVAILABLE, [("retry-after", "3")], big) }
        }),
    );
    let server = Server::start(router).await;
    let err = client(&server).raw().await.unwrap_err();
    assert_eq!(err.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(err.body().map(|b| b.len()), Some(8 * 1024));
    assert_eq!(err.retry_after(), Some(std::time::Duration::from_secs(3)));
    assert_eq!(err.headers().unwrap()["retry-after"], "3");
}

#[tokio::test]
async fn builder_errors_are_deferred_to_build() {
    let err = OrderClient::name_only().build().unwrap_err();
    assert!(err.is_builder());
    assert!(
        err.to_string()
            .contains("`order-service` has no url and no load balancer"),
        "{err}"
    );
    for bad in ["ftp://h/", "not a url", "http://h/?q=1", "http:///x"] {
        let err = OrderClient::builder().url(bad).build().unwrap_err();
        assert!(err.is_builder(), "{bad}: {err}");
    }
    let err = OrderClient::builder()
        .url("http://user:pw@[::1/")
        .build()
        .unwrap_err();
    assert!(!err.to_string().contains("pw"), "{err}");
}

#[test]
fn error_is_one_pointer_wide_send_sync_and_client_is_clone() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Error>();
    send_sync::<OrderClient>();
    assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    assert_eq!(
        std::mem::size_of::<Result<(), Error>>(),
        std::mem::size_of::<usize>()
    );
}

#[tokio::test]
async fn call_futures_are_send() {
    fn assert_send<F: std::future::Future + Send>(f: F) -> F {
        f
    }
    let server = Server::start(orders()).await;
    let client = client(&server);
    let handle = tokio::spawn(async move { assert_send(client.get_order(&3)).await });
    assert_eq!(handle.await.unwrap().unwrap().id, 3);
}

#[tokio::test]
async fn any_tower_service_can_be_the_client() {
    // An in-process axum router behind `map_request`: no socket at all.
    let router = orders();
    let service = tower::ServiceExt::map_request(router, |req: http::Request<bytes::Bytes>| {
        req.map(axum::body::Body::from)
    });
    let client = OrderClient::builder()
        .url("http://orders.internal")
        .tower_client(service)
        .build()
        .unwrap();
    assert_eq!(client.get_order(&11).await.unwrap().id, 11);
    assert_eq!(client.try_get(404).await.unwrap(), None);
}

#[tokio::test]
async fn userinfo_in_the_url_becomes_basic_auth_and_is_never_shown() {
    let server = Server::start(orders()).await;
    let url = server.url().replace("http://", "http://user:pw@");
    let client = OrderClient::builder()
        .url(url)
        .retryer(Retryer::never())
        .build()
        .unwrap();
    let err = client.get_order(&404).await.unwrap_err();
    assert_eq!(
        server.recorded()[0].headers["authorization"],
        "Basic dXNlcjpwdw=="
    );
    let shown = format!("{err} {err:?} {client:?}");
    assert!(!shown.contains("pw"), "{shown}");
}

#[tokio::test]
async fn a_custom_decoder_works_for_any_deserialize_type() {
    let router = Router::new().route(
        "/api/orders/{id}",
        get(|Path(id): Path<u64>| async move {
            Json(serde_json::json!({ "data": { "id": id, "item": "wrapped" } }))
        }),
    );
    let server = Server::start(router).await;
    let unwrap_envelope = feign_core::codec::decoder_fn(
        |response: &feign_core::Response, target: &mut feign_core::codec::DecodeTarget<'_>| {
            let envelope: serde_json::Value = response.json()?;
            target.deserialize(envelope["data"].clone())
        },
    );
    let client = OrderClient::builder()
        .url(server.url())
        .decoder(unwrap_envelope)
        .build()
        .unwrap();
    assert_eq!(
        client.get_order(&3).await.unwrap(),
        Order {
            id: 3,
            item: "wrapped".into()
        }
    );
    let err = client.raw_json().await.unwrap_err();
    assert!(err.is_status(), "no route: {err:?}");
}

#[tokio::test]
async fn the_form_encoder_replaces_json_for_bodies() {
    let server = Server::start(Router::new().route(
        "/api/orders",
        post(|body: bytes::Bytes| async move {
            Json(Order {
                id: 1,
                item: String::from_utf8_lossy(&body).into_owned(),
            })
        }),
    ))
    .await;
    let client = OrderClient::builder()
        .url(server.url())
        .encoder(feign_core::codec::FormEncoder)
        .build()
        .unwrap();
    let echoed = client
        .create(
            &NewOrder {
                item: "a b&c".into(),
            },
            "r",
        )
        .await
        .unwrap();
    assert_eq!(echoed.item, "item=a+b%26c");
    assert_eq!(
        server.recorded()[0].headers["content-type"],
        "application/x-www-form-urlencoded"
    );
}

#[tokio::test]
async fn a_closure_can_be_the_client() {
    let client = OrderClient::builder()
        .url("http://orders.test")
        .client(feign_core::client::client_fn(
            |request: http::Request<bytes::Bytes>| async move {
                use http_body_util::BodyExt;
                let body = format!(r#"{{"id":1,"item":"{}"}}"#, request.uri().path());
                let body = http_body_util::Full::new(bytes::Bytes::from(body))
                    .map_err(|never| match never {})
                    .boxed_unsync();
                Ok(http::Response::builder()
                    .header("content-type", "application/json")
                    .body(body)
                    .unwrap())
            },
        ))
        .build()
        .unwrap();
    assert_eq!(client.get_order(&5).await.unwrap().item, "/api/orders/5");
}
