//! `OrderService`: a client written by hand exactly as `#[feign_client]` generates it, so that
//! feign-core's tests exercise `feign_core::__private` directly, and a server for it.

use axum::Router;
use bytes::Bytes;
use feign_core::__private::{
    self, ClientMeta, Core, FromCore, HttpMethod, MethodMeta, MethodOptions, PathPart,
};
use feign_core::{Builder, Error, Response};
use serde::{Deserialize, Serialize};

use crate::Server;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
/// An order, as the server sends it.
pub struct Order {
    /// Its number.
    pub id: u64,
    /// What was ordered.
    pub item: String,
}

#[derive(Debug, Serialize)]
/// An order to create, as the client sends it.
pub struct NewOrder {
    /// What to order.
    pub item: String,
}

/// The client's metadata: service `order-service`, a fixed URL (replaced in tests), base path `/api`.
pub static CLIENT: ClientMeta = ClientMeta {
    trait_name: "OrderService",
    service: "order-service",
    url: Some("http://127.0.0.1:9"),
    path: "/api",
};

/// The same client declared with only a service name: no URL, base path `/api`.
pub static NAME_ONLY: ClientMeta = ClientMeta {
    trait_name: "OrderService",
    service: "order-service",
    url: None,
    path: "/api",
};

const fn meta(
    name: &'static str,
    key: &'static str,
    method: HttpMethod,
    route: &'static str,
    path: &'static [PathPart],
    idempotent: bool,
) -> MethodMeta {
    MethodMeta {
        key,
        name,
        method,
        route,
        path,
        query: &[],
        headers: &[("Accept", "application/json")],
        idempotent,
        options: MethodOptions::NONE,
    }
}

/// `GET /orders/{id}`.
pub static GET_ORDER: MethodMeta = meta(
    "get_order",
    "OrderService#get_order",
    HttpMethod::Get,
    "GET /orders/{id}",
    &[PathPart::Literal("/orders/"), PathPart::Var(0)],
    true,
);
/// `GET /orders/{id}/items/{item}`.
pub static GET_ITEM: MethodMeta = meta(
    "get_item",
    "OrderService#get_item",
    HttpMethod::Get,
    "GET /orders/{id}/items/{item}",
    &[
        PathPart::Literal("/orders/"),
        PathPart::Var(0),
        PathPart::Literal("/items/"),
        PathPart::Var(1),
    ],
    true,
);
/// `GET /orders?fixed=a b`: a template with a fixed query pair.
pub static FIND: MethodMeta = MethodMeta {
    query: &[("fixed", "a%20b")],
    ..meta(
        "find",
        "OrderService#find",
        HttpMethod::Get,
        "GET /orders?fixed=a b",
        &[PathPart::Literal("/orders")],
        true,
    )
};
/// `POST /orders` with a fixed `X-Source: feign` header; not idempotent.
pub static CREATE: MethodMeta = MethodMeta {
    headers: &[("Accept", "application/json"), ("X-Source", "feign")],
    ..meta(
        "create",
        "OrderService#create",
        HttpMethod::Post,
        "POST /orders",
        &[PathPart::Literal("/orders")],
        false,
    )
};
/// `DELETE /orders/{id}`.
pub static CANCEL: MethodMeta = meta(
    "cancel",
    "OrderService#cancel",
    HttpMethod::Delete,
    "DELETE /orders/{id}",
    &[PathPart::Literal("/orders/"), PathPart::Var(0)],
    true,
);
/// `GET /raw`.
pub static RAW: MethodMeta = meta(
    "raw",
    "OrderService#raw",
    HttpMethod::Get,
    "GET /raw",
    &[PathPart::Literal("/raw")],
    true,
);
/// `GET /raw` with a per-method read timeout of 200 ms.
pub static SLOW: MethodMeta = MethodMeta {
    options: MethodOptions {
        read_timeout_ms: Some(200),
        ..MethodOptions::NONE
    },
    ..meta(
        "slow",
        "OrderService#slow",
        HttpMethod::Get,
        "GET /raw",
        &[PathPart::Literal("/raw")],
        true,
    )
};

/// What `#[feign_client]` generates for `OrderService`, written by hand.
#[derive(Clone, Debug)]
pub struct OrderClient {
    core: Core,
}

impl FromCore for OrderClient {
    fn from_core(core: Core) -> Self {
        OrderClient { core }
    }
}

impl OrderClient {
    /// A builder for the client with a fixed URL ([`CLIENT`]).
    pub fn builder() -> Builder<Self> {
        __private::builder(&CLIENT)
    }

    /// A builder for the client declared by name only ([`NAME_ONLY`]).
    pub fn name_only() -> Builder<Self> {
        __private::builder(&NAME_ONLY)
    }

    /// The client's core, for tests that send methods of their own.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// `GET /orders/{id}`, decoded as JSON.
    pub async fn get_order(&self, id: &(impl std::fmt::Display + ?Sized)) -> Result<Order, Error> {
        let mut req = self.core.request(&GET_ORDER);
        req.path(0, id);
        self.core.call::<__private::Json<Order>>(req).await
    }

    /// `GET /orders/{id}`, the body as text.
    pub async fn get_order_text(&self, id: &str) -> Result<String, Error> {
        let mut req = self.core.request(&GET_ORDER);
        req.path(0, id);
        self.core.call::<__private::Text>(req).await
    }

    /// `GET /orders/{id}` with 404 meaning `None`.
    pub async fn try_get(&self, id: u64) -> Result<Option<Order>, Error> {
        let mut req = self.core.request(&GET_ORDER);
        req.path(0, &id);
        self.core
            .call::<__private::Optional<__private::Json<Order>>>(req)
            .await
    }

    /// `GET /orders/{id}/items/{item}` (path variables bound out of order), the body as text.
    pub async fn get_item(&self, id: &str, item: &str) -> Result<String, Error> {
        let mut req = self.core.request(&GET_ITEM);
        req.path(1, item);
        req.path(0, id);
        self.core.call::<__private::Text>(req).await
    }

    /// `GET /orders` with an optional `status`, repeated `tag`s and free pairs in the query.
    pub async fn find(
        &self,
        pairs: &[(&str, &str)],
        status: Option<&str>,
        tags: &[&str],
    ) -> Result<String, Error> {
        let mut req = self.core.request(&FIND);
        if let Some(status) = status {
            req.query("status", status);
        }
        for tag in tags {
            req.query("tag", tag);
        }
        for (name, value) in pairs {
            req.query(name, value);
        }
        self.core.call::<__private::Text>(req).await
    }

    /// `GET /orders` with a query built from a serializable map or struct.
    pub async fn find_map<T: Serialize + ?Sized>(&self, filter: &T) -> Result<String, Error> {
        let mut req = self.core.request(&FIND);
        req.query_map(filter);
        self.core.call::<__private::Text>(req).await
    }

    /// `POST /orders` with a JSON body and an `X-Request-Id` header.
    pub async fn create(&self, order: &NewOrder, rid: &str) -> Result<Order, Error> {
        let mut req = self.core.request(&CREATE);
        req.body(order);
        req.header("X-Request-Id", rid);
        self.core.call::<__private::Json<Order>>(req).await
    }

    /// `POST /orders` with headers from a map and a raw body.
    pub async fn create_with_headers<H: __private::HeaderMapArg + ?Sized>(
        &self,
        headers: &H,
    ) -> Result<(), Error> {
        let mut req = self.core.request(&CREATE);
        req.header_map(headers);
        req.body_raw("raw body");
        self.core.call::<__private::Unit>(req).await
    }

    /// `POST /orders` with a form-encoded body; the response body as bytes.
    pub async fn create_form<T: Serialize + ?Sized>(&self, form: &T) -> Result<Bytes, Error> {
        let mut req = self.core.request(&CREATE);
        req.form(form);
        self.core.call::<__private::Raw>(req).await
    }

    /// `DELETE /orders/{id}`, expecting no body.
    pub async fn cancel(&self, id: &str) -> Result<(), Error> {
        let mut req = self.core.request(&CANCEL);
        req.path(0, id);
        self.core.call::<__private::Unit>(req).await
    }

    /// `GET /raw`, the whole response.
    pub async fn raw(&self) -> Result<Response, Error> {
        let req = self.core.request(&RAW);
        self.core.call::<__private::Whole>(req).await
    }

    /// `GET /raw`, decoded as any JSON value.
    pub async fn raw_json(&self) -> Result<serde_json::Value, Error> {
        let req = self.core.request(&RAW);
        self.core
            .call::<__private::Json<serde_json::Value>>(req)
            .await
    }

    /// `GET /raw` under [`SLOW`]'s 200 ms read timeout.
    pub async fn slow(&self) -> Result<Bytes, Error> {
        let req = self.core.request(&SLOW);
        self.core.call::<__private::Raw>(req).await
    }

    /// `GET /raw` with one header from the arguments.
    pub async fn header(&self, name: &str, value: &str) -> Result<(), Error> {
        let mut req = self.core.request(&RAW);
        req.header(name, value);
        self.core.call::<__private::Unit>(req).await
    }
}

/// A retryer allowing `attempts` attempts, 1 ms apart and without jitter, for tests that count
/// what the retries record.
pub fn quick_retryer(attempts: u32) -> feign_core::Retryer {
    feign_core::Retryer::default()
        .jitter(false)
        .period(std::time::Duration::from_millis(1))
        .max_attempts(attempts)
}

/// A server for `GET /api/orders/{id}` (the order, as JSON) and
/// `GET /api/orders/{id}/items/{item}` (always 503), for tests of what a call records.
pub async fn orders_server() -> Server {
    Server::start(
        Router::new()
            .route(
                "/api/orders/{id}",
                axum::routing::get(
                    |axum::extract::Path(id): axum::extract::Path<u64>| async move {
                        axum::Json(Order {
                            id,
                            item: "book".into(),
                        })
                    },
                ),
            )
            .route(
                "/api/orders/{id}/items/{item}",
                axum::routing::get(|| async {
                    (axum::http::StatusCode::SERVICE_UNAVAILABLE, "busy")
                }),
            ),
    )
    .await
}
