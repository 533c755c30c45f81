//! Around the call: `tower::Layer`s over the whole call, response interceptors, and the header
//! checks every route to the wire goes through; against real servers on 127.0.0.1.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::Path;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use feign_core::http::{HeaderMap, HeaderName, HeaderValue};
use feign_core::interceptor::{interceptor_fn, response_interceptor_fn};
use feign_core::layer::CallRequest;
use feign_core::{feign_client, Error, RequestTemplate, Response, Retryer};
use feign_test_support::{recording_server, Server};
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt};

#[feign_client("items")]
trait Items {
    #[get("/items/{id}")]
    async fn item(&self, #[path] id: u32) -> Result<String, Error>;

    #[get("/items/{id}")]
    async fn maybe(&self, #[path] id: u32) -> Result<Option<String>, Error>;
}

fn builder(url: &str) -> feign_core::Builder<ItemsClient> {
    ItemsClient::builder().url(url).retryer(Retryer::never())
}

type Inner = BoxCloneSyncService<CallRequest, Response, Error>;
type BoxFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response, Error>> + Send + 'static>>;
/// Sets a header on a map, as a route to the wire might.
type SetHeader = fn(&mut HeaderMap);

/// A server answering `item-{id}` after `delay`, counting the requests in flight at once.
async fn slow_server(delay: Duration) -> (Server, Arc<AtomicUsize>) {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (counting, kept) = (in_flight.clone(), most.clone());
    let router = Router::new().route(
        "/items/{id}",
        get(move |Path(id): Path<u32>| {
            let (in_flight, most) = (counting.clone(), kept.clone());
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(delay).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                match id {
                    404 => Err(StatusCode::NOT_FOUND),
                    503 => Err(StatusCode::SERVICE_UNAVAILABLE),
                    id => Ok(format!("item-{id}")),
                }
            }
        }),
    );
    (Server::start(router).await, most)
}

/// Items 1 to 4, asked for at once from four tasks; the answers in that order.
async fn four_at_once(client: &ItemsClient) -> Vec<Result<String, Error>> {
    let calls: Vec<_> = (1..=4)
        .map(|id| {
            let client = client.clone();
            tokio::spawn(async move { client.item(id).await })
        })
        .collect();
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.expect("the call's task"));
    }
    answers
}

#[tokio::test]
async fn a_concurrency_limit_layer_holds_calls_to_its_limit() {
    let (server, most) = slow_server(Duration::from_millis(100)).await;
    let client = builder(&server.url())
        .layer(tower::limit::ConcurrencyLimitLayer::new(1))
        .build()
        .unwrap();
    for (id, answer) in (1..=4).zip(four_at_once(&client).await) {
        assert_eq!(answer.unwrap(), format!("item-{id}"));
    }
    assert_eq!(server.request_count(), 4);
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "one call in flight at a time"
    );

    // Without the layer the same calls overlap, so the limit above is the layer's doing (a
    // longer answer, so they overlap however slowly the tasks start).
    let (server, most) = slow_server(Duration::from_millis(300)).await;
    let client = builder(&server.url()).build().unwrap();
    for answer in four_at_once(&client).await {
        answer.unwrap();
    }
    assert!(most.load(Ordering::SeqCst) > 1);
}

#[tokio::test]
async fn a_rate_limit_behind_a_buffer_spaces_the_calls_out() {
    let (url, recorder) = recording_server(|_| "ok").await;
    // `RateLimit` is neither `Clone` nor shared: a `Buffer` in front makes it both (and needs
    // the runtime when the client is built), and its errors go back to `Error`.
    let client = builder(&url)
        .layer(
            tower::ServiceBuilder::new()
                .map_err(back_to_error)
                .buffer(16)
                .rate_limit(2, Duration::from_millis(300)),
        )
        .build()
        .unwrap();
    for answer in four_at_once(&client).await {
        assert_eq!(answer.unwrap(), "ok");
    }
    let mut arrivals: Vec<_> = recorder.all().into_iter().map(|r| r.at).collect();
    arrivals.sort();
    assert_eq!(arrivals.len(), 4);
    let spread = arrivals[3] - arrivals[0];
    assert!(
        spread >= Duration::from_millis(250),
        "4 calls at 2 per 300 ms took {spread:?}"
    );
}

/// A tower error back to feign's: one from inside the call as it was, the layer's own as a
/// transport error.
fn back_to_error(error: feign_core::BoxError) -> Error {
    match error.downcast::<Error>() {
        Ok(error) => *error,
        Err(other) => Error::transport(other),
    }
}

#[tokio::test]
async fn a_timeout_layer_fits_under_a_map_err_and_bounds_the_whole_call() {
    let (server, _) = slow_server(Duration::from_millis(500)).await;
    let client = builder(&server.url())
        .layer(
            tower::ServiceBuilder::new()
                .map_err(back_to_error)
                .timeout(Duration::from_millis(50)),
        )
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let error = client.item(1).await.unwrap_err();
    assert!(error.is_transport(), "{error:?}");
    assert!(started.elapsed() < Duration::from_millis(400));
    assert_eq!(error.method_key(), Some("Items#item"));
    // An error from inside the layer comes back as it was.
    let client = builder(&server.url())
        .layer(
            tower::ServiceBuilder::new()
                .map_err(back_to_error)
                .timeout(Duration::from_secs(5)),
        )
        .build()
        .unwrap();
    let error = client.item(503).await.unwrap_err();
    assert_eq!(error.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
}

/// Answers a request it has seen from memory, keyed by method key and path and query.
#[derive(Clone, Default)]
struct CacheLayer {
    entries: Arc<Mutex<HashMap<(String, String), Response>>>,
}

impl<S> Layer<S> for CacheLayer {
    type Service = Cache<S>;
    fn layer(&self, inner: S) -> Cache<S> {
        Cache {
            inner,
            entries: self.entries.clone(),
        }
    }
}

#[derive(Clone)]
struct Cache<S> {
    inner: S,
    entries: Arc<Mutex<HashMap<(String, String), Response>>>,
}

impl Service<CallRequest> for Cache<Inner> {
    type Response = Response;
    type Error = Error;
    type Future = BoxFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: CallRequest) -> Self::Future {
        let key = (
            request.method_key().to_owned(),
            request.template().path_and_query().to_owned(),
        );
        let entries = self.entries.clone();
        let hit = entries.lock().unwrap().get(&key).cloned();
        let inner = self.inner.clone();
        Box::pin(async move {
            if let Some(hit) = hit {
                return Ok(hit);
            }
            let response = inner.oneshot(request).await?;
            entries.lock().unwrap().insert(key, response.clone());
            Ok(response)
        })
    }
}

#[tokio::test]
async fn a_caching_layer_answers_without_a_network_call() {
    let (server, _) = slow_server(Duration::ZERO).await;
    let client = builder(&server.url())
        .layer(CacheLayer::default())
        .build()
        .unwrap();
    assert_eq!(client.item(1).await.unwrap(), "item-1");
    assert_eq!(client.item(1).await.unwrap(), "item-1");
    assert_eq!(
        server.request_count(),
        1,
        "the second call came from the cache"
    );
    assert_eq!(client.item(2).await.unwrap(), "item-2");
    assert_eq!(server.request_count(), 2);
    // A 404 an `Option` method takes as an answer passes the layer as a response: cached too.
    assert_eq!(client.maybe(404).await.unwrap(), None);
    assert_eq!(client.maybe(404).await.unwrap(), None);
    assert_eq!(server.request_count(), 3);
}

/// A layer that answers every call itself, with an error or a response.
#[derive(Clone)]
struct Answer(Result<Response, &'static str>);

impl<S> Layer<S> for Answer {
    type Service = Answer;
    fn layer(&self, _inner: S) -> Answer {
        self.clone()
    }
}

impl Service<CallRequest> for Answer {
    type Response = Response;
    type Error = Error;
    type Future = std::future::Ready<Result<Response, Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: CallRequest) -> Self::Future {
        std::future::ready(self.0.clone().map_err(Error::request))
    }
}

#[tokio::test]
async fn a_layer_can_fail_the_call_or_answer_a_status_the_error_decoder_gets() {
    let (server, _) = slow_server(Duration::ZERO).await;
    let failing = builder(&server.url())
        .layer(Answer(Err("rate limit exceeded")))
        .build()
        .unwrap();
    let error = failing.item(1).await.unwrap_err();
    assert!(error.to_string().contains("rate limit exceeded"), "{error}");
    assert_eq!(error.method_key(), Some("Items#item"));

    let unavailable = Response::new(
        StatusCode::SERVICE_UNAVAILABLE,
        HeaderMap::new(),
        Bytes::from_static(b"busy"),
    );
    let answering = builder(&server.url())
        .layer(Answer(Ok(unavailable)))
        .build()
        .unwrap();
    let error = answering.item(1).await.unwrap_err();
    assert_eq!(error.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(error.method_key(), Some("Items#item"));
    assert_eq!(server.request_count(), 0, "nothing reached the network");
}

/// Records what each layer saw, to show their order and place.
#[derive(Clone)]
struct Trace {
    name: &'static str,
    seen: Arc<Mutex<Vec<String>>>,
}

impl<S> Layer<S> for Trace {
    type Service = Traced<S>;
    fn layer(&self, inner: S) -> Traced<S> {
        Traced {
            inner,
            trace: self.clone(),
        }
    }
}

#[derive(Clone)]
struct Traced<S> {
    inner: S,
    trace: Trace,
}

impl Service<CallRequest> for Traced<Inner> {
    type Response = Response;
    type Error = Error;
    type Future = BoxFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: CallRequest) -> Self::Future {
        let trace = self.trace.clone();
        let tenant = request.template().headers().get("x-tenant").cloned();
        trace.seen.lock().unwrap().push(format!(
            "{} in, tenant {:?}",
            trace.name,
            tenant.as_ref().map(|t| t.to_str().unwrap().to_owned())
        ));
        let name = HeaderName::from_static("x-layer");
        request
            .template_mut()
            .headers_mut()
            .append(name, HeaderValue::from_static(trace.name));
        let inner = self.inner.clone();
        Box::pin(async move {
            let response = inner.oneshot(request).await;
            let status = response.as_ref().map(|r| r.status().as_u16());
            trace
                .seen
                .lock()
                .unwrap()
                .push(format!("{} out, {status:?}", trace.name));
            response
        })
    }
}

#[tokio::test]
async fn layers_run_after_request_interceptors_first_added_outermost() {
    let (url, recorder) = recording_server(|_| "ok").await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let trace = |name| Trace {
        name,
        seen: seen.clone(),
    };
    let client = builder(&url)
        .interceptor(interceptor_fn(|r: &mut RequestTemplate| {
            r.insert_header("x-tenant", "acme")
        }))
        .response_interceptor(response_interceptor_fn(|response: Response, _| {
            let (_, headers, body) = response.into_parts();
            Ok(Response::new(StatusCode::OK, headers, body))
        }))
        .layer(trace("outer"))
        .layer(trace("inner"))
        .build()
        .unwrap();
    assert_eq!(client.item(1).await.unwrap(), "ok");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "outer in, tenant Some(\"acme\")",
            "inner in, tenant Some(\"acme\")",
            "inner out, Ok(200)",
            "outer out, Ok(200)",
        ]
    );
    let sent: Vec<_> = recorder
        .only()
        .headers
        .get_all("x-layer")
        .iter()
        .cloned()
        .collect();
    assert_eq!(sent, ["outer", "inner"]);
}

#[tokio::test]
async fn response_interceptors_run_in_order_and_may_replace_or_fail() {
    let (url, recorder) = recording_server(|recorded| {
        if recorded.path == "/items/503" {
            (StatusCode::SERVICE_UNAVAILABLE, "down")
        } else {
            (StatusCode::OK, "{\"error\":\"hidden\"}")
        }
    })
    .await;
    let order = Arc::new(Mutex::new(Vec::new()));
    let (first, second) = (order.clone(), order.clone());
    let client = builder(&url)
        // Sees the raw 503 and turns it into a 200 with a body of its own.
        .response_interceptor(response_interceptor_fn(move |response: Response, ctx| {
            first
                .lock()
                .unwrap()
                .push(format!("first {} {}", response.status(), ctx.method_key()));
            if response.status() == StatusCode::SERVICE_UNAVAILABLE {
                return Ok(Response::new(
                    StatusCode::OK,
                    HeaderMap::new(),
                    Bytes::from_static(b"fallback"),
                ));
            }
            Ok(response)
        }))
        // Sees what the first returned; fails a 200 that carries an error document.
        .response_interceptor(response_interceptor_fn(move |response: Response, ctx| {
            second.lock().unwrap().push(format!(
                "second {} attempt {} {}",
                response.status(),
                ctx.attempt(),
                ctx.request().path_and_query()
            ));
            if response.body().starts_with(b"{\"error\"") {
                return Err(Error::request("error document in a 200"));
            }
            Ok(response)
        }))
        .build()
        .unwrap();
    assert_eq!(client.item(503).await.unwrap(), "fallback");
    let error = client.item(1).await.unwrap_err();
    assert!(error.to_string().contains("error document"), "{error}");
    assert_eq!(error.method_key(), Some("Items#item"));
    assert_eq!(
        *order.lock().unwrap(),
        [
            "first 503 Service Unavailable Items#item",
            "second 200 OK attempt 1 /items/503",
            "first 200 OK Items#item",
            "second 200 OK attempt 1 /items/1",
        ]
    );
    assert_eq!(recorder.len(), 2);
}

#[tokio::test]
async fn every_route_a_header_takes_is_checked_before_anything_is_sent() {
    let (server, _) = slow_server(Duration::ZERO).await;
    let bad: [(&str, SetHeader); 4] = [
        ("host", |h| {
            h.insert("host", HeaderValue::from_static("elsewhere.example"));
        }),
        ("content-length", |h| {
            h.insert("content-length", HeaderValue::from_static("1000"));
        }),
        ("transfer-encoding", |h| {
            h.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        }),
        ("x-name", |h| {
            h.insert("x-name", HeaderValue::from_bytes(b"caf\xe9").unwrap());
        }),
    ];
    for (name, set) in bad {
        // An interceptor writing through `headers_mut()`.
        let through_interceptor = builder(&server.url())
            .interceptor(interceptor_fn(move |r: &mut RequestTemplate| {
                set(r.headers_mut());
                Ok(())
            }))
            .build()
            .unwrap();
        let error = through_interceptor.item(1).await.unwrap_err();
        assert!(error.is_request(), "{name}: {error:?}");
        assert!(error.to_string().contains(name), "{error}");
        assert!(
            !error.to_string().contains("caf"),
            "the value is not echoed"
        );

        // A layer writing through `template_mut().headers_mut()`.
        let through_layer = builder(&server.url())
            .layer(tower::layer::layer_fn(move |inner: Inner| {
                tower::util::MapRequest::new(inner, move |mut request: CallRequest| {
                    set(request.template_mut().headers_mut());
                    request
                })
            }))
            .build()
            .unwrap();
        let error = through_layer.item(1).await.unwrap_err();
        assert!(error.is_request(), "{name}: {error:?}");
        assert!(error.to_string().contains(name), "{error}");
    }
    // `insert_header` refuses them as it always did.
    for (name, value) in [
        ("Host", "elsewhere"),
        ("Content-Length", "3"),
        ("X-Name", "caf\u{e9}"),
    ] {
        let client = builder(&server.url())
            .interceptor(interceptor_fn(move |r: &mut RequestTemplate| {
                r.insert_header(name, value)
            }))
            .build()
            .unwrap();
        let error = client.item(1).await.unwrap_err();
        assert!(error.is_interceptor(), "{name}: {error:?}");
    }
    assert_eq!(server.connection_count(), 0, "nothing was sent");

    // A clean header set through `headers_mut()` is sent.
    let client = builder(&server.url())
        .interceptor(interceptor_fn(|r: &mut RequestTemplate| {
            r.headers_mut()
                .insert("x-clean", HeaderValue::from_static("yes"));
            Ok(())
        }))
        .build()
        .unwrap();
    assert_eq!(client.item(1).await.unwrap(), "item-1");
    assert_eq!(server.recorded()[0].headers["x-clean"], "yes");
}

#[feign_client("files")]
trait Files {
    #[get("/items/{id}")]
    async fn download(&self, #[path] id: u32) -> Result<feign_core::StreamingResponse, Error>;
}

#[tokio::test]
async fn a_streaming_method_under_a_layer_is_limited_and_gets_its_body_whole() {
    let (server, most) = slow_server(Duration::from_millis(50)).await;
    let client = FilesClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .layer(tower::limit::ConcurrencyLimitLayer::new(1))
        .build()
        .unwrap();
    let calls: Vec<_> = (1..=3)
        .map(|id| {
            let client = client.clone();
            tokio::spawn(async move { client.download(id).await?.bytes().await })
        })
        .collect();
    for (id, call) in (1..=3).zip(calls) {
        let body = call.await.expect("the call's task").unwrap();
        assert_eq!(body, format!("item-{id}"));
    }
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "the layer held for streaming calls"
    );
    let error = client.download(503).await.unwrap_err();
    assert_eq!(error.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
}

#[tokio::test]
async fn response_interceptors_see_a_streaming_methods_errors_but_not_its_streamed_bodies() {
    let (server, _) = slow_server(Duration::ZERO).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let saw = seen.clone();
    let client = FilesClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .response_interceptor(response_interceptor_fn(move |response: Response, _| {
            saw.lock().unwrap().push(response.status().as_u16());
            Ok(response)
        }))
        .build()
        .unwrap();
    let body = client.download(7).await.unwrap().bytes().await.unwrap();
    assert_eq!(body, "item-7");
    assert!(client.download(503).await.is_err());
    assert_eq!(*seen.lock().unwrap(), [503]);
}
