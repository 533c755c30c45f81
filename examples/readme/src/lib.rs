//! Every Rust block of the README, verbatim, each in a function of its own after what it takes
//! for granted (types, a balancer), so that `cargo build -p readme-snippets` checks that the
//! README's examples compile. Nothing here runs but the README's one test and the registry
//! snippets pasted together (`tests/registry_flow.rs`); `tests/verbatim.rs` checks that each
//! README block appears here unchanged. The functions are `#[rustfmt::skip]`
//! so the blocks keep the README's layout.

use std::error::Error as StdError;
use std::sync::Arc;

use feign_core::{
    BearerAuth, BulkheadConfig, CircuitBreakerConfig, ErrorDecoder, FallbackFactory, Response,
    Retryer,
};
use feign_lb::LoadBalancer;
use serde::{Deserialize, Serialize};

/// What the snippets' `?` converts into.
pub type Outcome = Result<(), Box<dyn StdError + Send + Sync>>;

/// An order, as the README's service returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// The order's id.
    pub id: u64,
}

/// What the README's client sends to create an order.
#[derive(Debug, Serialize)]
pub struct NewOrder {
    /// What to order.
    pub item: String,
}

/// What the README's upload sends beside its file.
#[derive(Debug, Serialize)]
pub struct Metadata {
    /// How many pages the report has.
    pub pages: u32,
}

/// The README's own error decoder: here, the default one.
#[derive(Debug, Clone, Copy)]
pub struct MyErrorDecoder;

impl ErrorDecoder for MyErrorDecoder {
    fn decode(&self, method_key: &str, response: Response) -> feign_core::Error {
        feign_core::codec::DefaultErrorDecoder::default().decode(method_key, response)
    }
}

/// A name-only client, for the snippets that use `OrderServiceClient` without declaring it.
#[allow(dead_code)]
mod name_only {
    use feign_core::{feign_client, Error};

    #[feign_client("order-service")]
    pub(crate) trait OrderService {
        #[get("/orders/{id}")]
        async fn get_order(&self, #[path] id: u64) -> Result<super::Order, Error>;
    }
}

use name_only::{OrderService as _, OrderServiceClient};

/// A balancer over two local instances, for the snippets that take `lb` for granted.
fn balancer() -> LoadBalancer {
    LoadBalancer::builder()
        .static_lists([("order-service", vec!["http://127.0.0.1:8081"])])
        .build()
}

/// "Quick start".
#[rustfmt::skip]
#[allow(unused_variables, dead_code, unreachable_pub)]
pub async fn quick_start() -> Outcome {
use feign_core::{feign_client, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080", path = "/api")]
#[headers("Accept: application/json")]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;

    #[get("/orders")]
    async fn find(&self, #[query] status: Option<String>, #[query("page-size")] size: u32)
        -> Result<Vec<Order>, Error>;

    #[get("/orders/{id}")]
    async fn try_get(&self, #[path] id: u64) -> Result<Option<Order>, Error>; // 404 -> None

    #[post("/orders")]
    #[headers("X-Source: feign")]
    async fn create(&self, #[body] order: &NewOrder, #[header("X-Request-Id")] rid: &str)
        -> Result<Order, Error>;

    #[delete("/orders/{id}")]
    async fn cancel(&self, #[path] id: u64) -> Result<(), Error>;
}

let orders = OrderServiceClient::builder()      // the macro generates `{Trait}Client`
    .url("http://127.0.0.1:8080")               // overrides the attribute's url
    .interceptor(BearerAuth::new("token"))
    .error_decoder(MyErrorDecoder)
    .retryer(Retryer::default())
    .build()?;
let order = orders.get_order(42).await?;
let shared: Arc<dyn OrderService> = Arc::new(orders); // object safe; futures are Send
    Ok(())
}

/// "Testing code that uses a client": its test runs with this crate's.
#[rustfmt::skip]
#[allow(dead_code, unreachable_pub)]
mod testing {
use super::{NewOrder, Order};

use std::sync::Arc;

use feign_core::{feign_client, http::StatusCode, Error};

#[feign_client("order-service", url = "http://127.0.0.1:8080")]
pub trait OrderService {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Option<Order>, Error>;

    #[post("/orders")]
    async fn create(&self, #[body] order: &NewOrder) -> Result<Order, Error>;
}

/// The code under test: it knows only the trait. A create refused with 503 is tried again.
async fn reorder(orders: Arc<dyn OrderService>, id: u64) -> Result<Option<Order>, Error> {
    let Some(past) = orders.get_order(id).await? else { return Ok(None) };
    let again = NewOrder { item: format!("again-{}", past.id) };
    match orders.create(&again).await {
        Err(e) if e.status() == Some(StatusCode::SERVICE_UNAVAILABLE) => orders.create(&again).await.map(Some),
        placed => placed.map(Some),
    }
}

#[tokio::test]
async fn a_refused_reorder_is_tried_once_more() {
    let orders = OrderServiceDouble::new();              // generated beside OrderServiceClient
    orders.on_get_order().when(|id| *id == 7).returns(Some(Order { id: 7 }));
    orders.on_get_order().returns(None);                 // the first matching rule answers
    orders.on_create().times(1).fails_with_status(StatusCode::SERVICE_UNAVAILABLE);
    orders.on_create().answers(|order| Ok(Order { id: order.item.len() as u64 }));

    let placed = reorder(Arc::new(orders.clone()), 7).await.unwrap();
    assert_eq!(placed.map(|order| order.id), Some(7));   // "again-7"
    assert_eq!(reorder(Arc::new(orders.clone()), 8).await.unwrap(), None);

    assert_eq!(orders.on_create().calls(), 2);
    assert_eq!(orders.on_get_order().arguments(), [7, 8]); // kept when owned and Clone
    assert_eq!(orders.on_create().argument_texts()[0], r#"NewOrder { item: "again-7" }"#);
    orders.verify().unwrap();                            // every times(n) rule was used up
}
}

/// "Streaming and typed responses".
#[rustfmt::skip]
#[allow(unused_variables, unreachable_pub)]
pub async fn streaming() -> Outcome {
    use tokio::io::AsyncWriteExt;

    let files = FilesClient::builder().build()?;
    let mut out = tokio::io::sink();

use feign_core::{feign_client, Error, ResponseEntity, StreamingResponse};
use futures_util::StreamExt;

#[feign_client("files", url = "http://127.0.0.1:8080")]
pub trait Files {
    #[get("/files/{name}")]
    async fn download(&self, #[path] name: &str) -> Result<StreamingResponse, Error>;

    #[get("/orders/{id}")]
    async fn order(&self, #[path] id: u64) -> Result<ResponseEntity<Order>, Error>;
}

let mut file = files.download("report.csv").await?;   // returns when the head arrives
println!("{} {:?}", file.status(), file.content_length());
while let Some(chunk) = file.next().await {            // Stream<Item = Result<Bytes, Error>>
    out.write_all(&chunk?).await?;
}
// or: tokio::io::copy(&mut files.download("x").await?.into_async_read(), &mut out).await?;

let order = files.order(42).await?;                    // Spring's ResponseEntity<T>
let etag = order.headers().get("etag");
let order: Order = order.into_body();
    Ok(())
}

/// "Streaming uploads and multipart".
#[rustfmt::skip]
#[allow(unused_variables, dead_code, unreachable_pub)]
pub async fn streaming_uploads() -> Outcome {
    use feign_core::multipart::{FilePart, Part};
    use feign_core::{feign_client, BodyStream, Bytes, Error, FileBody};

    let lb = balancer();
    let rows = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from("a,b\n"))]);
    let meta = Metadata { pages: 12 };

#[feign_client("files")]
pub trait Files {
    #[put("/files/{name}")]                        // Content-Length from the file's size
    async fn put(&self, #[path] name: &str, #[body] file: FileBody) -> Result<(), Error>;

    #[post("/ingest")]                             // chunked: the length is not known
    async fn ingest(&self, #[body] rows: BodyStream) -> Result<(), Error>;

    #[post("/reports")]
    #[multipart]
    async fn upload(
        &self,
        #[part] title: &str,                       // a text field
        #[part("file")] file: FilePart,            // streamed from disk, with its file name
        #[part] meta: &Metadata,                   // JSON, as @RequestPart sends an object
        #[part] notes: Option<Part>,               // Part::text / bytes / stream; None: left out
    ) -> Result<(), Error>;
}

let files = FilesClient::builder().load_balancer(lb).build()?;
files.put("q3.csv", FileBody::open("q3.csv").await?).await?;  // a missing file fails here
files.ingest(BodyStream::new(rows)).await?;                  // any Stream of Result<Bytes, E>
let report = FilePart::open("q3.pdf").await?.content_type("application/pdf");
files.upload("Q3", report, &meta, Some(Part::text("draft"))).await?;
    Ok(())
}

/// "Circuit breaker, bulkhead, fallback".
#[rustfmt::skip]
#[allow(unused_variables, unused_mut, dead_code, unreachable_pub)]
pub fn resilience() -> Outcome {
    use feign_core::{feign_client, Error};

    let lb = balancer();

    /// Another implementation of the trait, made by the factory.
    struct Unavailable {
        why: String,
    }

    #[feign_core::async_trait]
    impl OrderService for Unavailable {}

#[feign_client("order-service", fallback = CachedOrders)]   // or fallback_factory = Explained
pub trait OrderService { /* ... */ }

#[derive(Default)]              // the attribute form builds the fallback with Default
struct CachedOrders;

#[feign_core::async_trait]
impl OrderService for CachedOrders { /* each method answers from the cache */ }

#[derive(Default)]              // a factory: implemented for the trait object, `dyn OrderService`
struct Explained;

impl FallbackFactory<dyn OrderService> for Explained {
    fn create(&self, cause: Error) -> Arc<dyn OrderService> {
        Arc::new(Unavailable { why: cause.to_string() })   // another impl of OrderService
    }
}

let breaker = CircuitBreakerConfig::default();               // Resilience4j's defaults
let mut transitions = breaker.subscribe();                   // closed -> open -> half_open ...
let orders = OrderServiceClient::builder()
    .load_balancer(lb)
    .circuit_breaker(breaker)                                // one per method, or per client
    .bulkhead(BulkheadConfig::default())                     // 25 in flight, no wait
    .build()?;
    Ok(())
}

/// "Middleware around the call".
#[rustfmt::skip]
#[allow(unused_variables)]
pub fn middleware() -> Outcome {
    let cache = tower::layer::util::Identity::new();
use tower::limit::ConcurrencyLimitLayer;

let orders = OrderServiceClient::builder()
    .url("http://127.0.0.1:8080")
    .layer(ConcurrencyLimitLayer::new(8))   // at most 8 calls of this client in flight
    .layer(cache)                           // any Layer over Service<CallRequest, Response = Response, Error = Error>
    .build()?;
    Ok(())
}

/// "Response interceptors".
#[rustfmt::skip]
#[allow(unused_variables)]
pub fn response_interceptors() -> Outcome {
use feign_core::interceptor::response_interceptor_fn;
use feign_core::{Error, Response};

let orders = OrderServiceClient::builder()
    .url("http://127.0.0.1:8080")
    .response_interceptor(response_interceptor_fn(|response: Response, ctx| {
        if response.body().starts_with(b"{\"error\"") {   // a 200 carrying an error document
            return Err(Error::request(format!("{} answered an error", ctx.method_key())));
        }
        Ok(response)
    }))
    .build()?;
    Ok(())
}

/// "Query collection formats and header templates".
#[rustfmt::skip]
#[allow(dead_code, unreachable_pub)]
pub fn formats() {
use feign_core::{feign_client, Error};

#[feign_client("search", url = "http://127.0.0.1:8080")]
pub trait Search {
    #[get("/items")]
    #[headers("X-Api-Version: {version}", "X-Tenant: {tenant}")]
    async fn items(
        &self,
        #[query(format = "csv")] ids: &[u64],          // ?ids=1,2,3
        #[query("tag", format = "pipes")] tags: Vec<String>, // ?tag=a|b
        #[param] version: u32,
        #[param] tenant: Option<String>,                // None leaves X-Tenant out
    ) -> Result<String, Error>;
}
}

/// "OpenAPI documents and contract checks".
#[rustfmt::skip]
#[allow(dead_code, unreachable_pub)]
pub fn openapi() -> Outcome {
use feign_core::openapi::{compare, DeclaresResponses, ErrorResponse};
use feign_core::codec::DefaultErrorDecoder;
use feign_core::{feign_client, Error, ErrorDecoder, Response};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Invoice { pub id: u64, pub total_cents: i64 }

#[feign_client("billing", path = "/api")]
pub trait Billing {
    /// One invoice; `None` when there is none.
    #[get("/invoices/{id}")]
    async fn invoice(&self, #[path] id: u64) -> Result<Option<Invoice>, Error>;
}

/// The client's error decoder, which also declares the errors it expects.
pub struct BillingErrors;

impl ErrorDecoder for BillingErrors {
    fn decode(&self, method_key: &str, response: Response) -> Error {
        DefaultErrorDecoder::default().decode(method_key, response)
    }
}

impl DeclaresResponses for BillingErrors {
    fn declared_responses(&self, _method_key: &str) -> Vec<ErrorResponse> {
        vec![ErrorResponse::server_errors("billing failed; retried")]
    }
}

let document = BillingClient::openapi()
    .error_decoder(&BillingErrors)        // adds the responses it declares
    .to_json();
let server: serde_json::Value = serde_json::from_str(&std::fs::read_to_string("billing-api.json")?)?;
for mismatch in compare(&document, &server)? {
    // GET /api/invoices/{id}, response 200 body .total_cents: the client has integer, the server string
    eprintln!("{mismatch}");
}
    Ok(())
}

/// "Compression".
#[rustfmt::skip]
#[allow(unused_variables)]
pub fn compression() -> Outcome {
use feign_core::compression::RequestCompression;

let orders = OrderServiceClient::builder()
    .url("http://127.0.0.1:8080")
    .request_compression(RequestCompression::default())  // gzip JSON/XML bodies over 2048 bytes
    .response_compression(true)                          // Accept-Encoding: gzip, decoded within the cap
    .build()?;
    Ok(())
}

/// "TLS, proxies and the connection pool".
#[rustfmt::skip]
#[allow(unused_variables)]
pub fn transport() -> Outcome {
use std::time::Duration;
use feign_core::transport::{HttpProtocol, Proxy, Tls, TlsVersion};

let orders = OrderServiceClient::builder()
    .url("https://orders.internal:8443")
    .tls(Tls::new()
        .ca_file("certs/internal-ca.pem")                             // only this CA is trusted
        .identity_files("certs/client.pem", "certs/client-key.pem")  // mutual TLS
        .min_version(TlsVersion::Tls13))
    .proxy(Proxy::all("http://user:secret@proxy.internal:3128").no_proxy("localhost,.svc"))
    .pool_idle_timeout(Duration::from_secs(30))
    .pool_max_idle_per_host(16)
    .http_protocol(HttpProtocol::Auto)        // or Http1Only, Http2PriorKnowledge (h2c)
    .build()?;                                // files are read and checked here
    Ok(())
}

/// "Load balancing".
#[rustfmt::skip]
#[allow(unused_variables)]
pub fn load_balancing() -> Outcome {
use feign_lb::{LoadBalancer, Policy, StaticSupplier};

let lb = LoadBalancer::builder()
    .supplier(StaticSupplier::new("order-service", ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]))
    .policy(Policy::PeakEwma)   // RoundRobin (default), Random, Weighted, LeastRequest, PeakEwma
    .build();
let orders = OrderServiceClient::builder().load_balancer(lb).build()?;
    Ok(())
}

/// "The balancer for any HTTP call".
#[rustfmt::skip]
#[allow(unused_variables)]
pub async fn any_client<S>(lb: LoadBalancer, transport: S) -> Outcome
where
    S: tower::Service<http::Request<String>, Response = http::Response<String>>,
    S: Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<feign_core::BoxError>,
{
use feign_lb::{LoadBalancedLayer, LoadBalancedMiddleware};
use tower::{Layer, ServiceExt};

// A plain reqwest::Client (feign-lb's feature `reqwest-middleware`):
let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    .with(LoadBalancedMiddleware::new(lb.clone()))
    .build();
let order = client.get("http://order-service/orders/1").send().await?.text().await?;

// Any tower Service<http::Request<B>> whose body B is Clone (a hyper-util client...):
let orders = LoadBalancedLayer::new(lb).layer(transport);
let request = http::Request::get("http://order-service/orders/1").body(String::new())?;
let response = orders.oneshot(request).await?;
    Ok(())
}

/// "Deterministic subsetting".
#[rustfmt::skip]
pub fn subsetting(eureka: feign_eureka::EurekaClient) -> Outcome {
let lb = feign_lb::LoadBalancer::builder()
    .supplier(eureka.supplier())
    .subset(feign_lb::Subset::new("billing-7f9c").size(100))   // Spring's default size
    .build();
    let _ = lb;
    Ok(())
}

/// "The embedded registry" and "Eureka", pasted together in that order: a registry, a service
/// registered with it, and a call to that service through discovery, which works on the first
/// try (`tests/registry_flow.rs` runs it). `orders_api` stands for the service's own router.
#[rustfmt::skip]
pub async fn embedded_registry_and_eureka() -> Result<Order, Box<dyn StdError + Send + Sync>> {
let registry = feign_eureka_server::EurekaServer::builder()
    .development()                        // changes show at once; not for production
    .bind("127.0.0.1:8761")
    .start().await?;
println!("{} (dashboard {})", registry.url(), registry.dashboard_url());

use feign_eureka::{EurekaClient, InstanceConfig};

let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;   // this service's own
let eureka = EurekaClient::builder()
    .development()                        // a registry on this machine: no waiting; not for production
    .service_urls(["http://127.0.0.1:8761/eureka/"])
    .instance(InstanceConfig::bound_to("order-service", listener.local_addr()?))
    .start().await?;                      // registered, and the registry fetched, when it returns
tokio::spawn(async move { axum::serve(listener, orders_api()).await });
let lb = feign_lb::LoadBalancer::builder().supplier(eureka.supplier()).build();
let orders = OrderServiceClient::builder().load_balancer(lb).build()?;
let order = orders.get_order(1).await?;   // found through the registry: the instance above
// ... at shutdown:
eureka.shutdown().await;                  // deregisters first, then stops its tasks
    registry.shutdown().await;
    Ok(order)
}

/// The order service's router, for the Eureka snippet: `GET /orders/{id}` answers that order.
fn orders_api() -> axum::Router {
    axum::Router::new().route(
        "/orders/{id}",
        axum::routing::get(|axum::extract::Path(id): axum::extract::Path<u64>| async move {
            axum::Json(Order { id })
        }),
    )
}

/// "Push discovery".
#[rustfmt::skip]
pub async fn push_discovery() -> Outcome {
let eureka = feign_eureka::EurekaClient::builder()
    .service_urls(["http://127.0.0.1:8761/eureka/"])
    .watch(true)                          // push when the registry offers it, else poll
    .start().await?;
    eureka.shutdown().await;
    Ok(())
}

/// "Configuration".
#[rustfmt::skip]
#[allow(unused_variables)]
pub async fn configuration() -> Outcome {
let config = feign_core::config::Config::load()?;        // the files, then the environment
let eureka = feign_eureka::SpringConfig::from_config(config.clone()).builder()?.start().await?;
let lb = LoadBalancer::builder().supplier(eureka.supplier()).config(&config)?.build();
let orders = OrderServiceClient::builder().load_balancer(lb).config(&config)?.build()?;
    Ok(())
}

/// "Adaptive concurrency limits".
#[rustfmt::skip]
#[allow(unused_variables)]
pub fn adaptive() -> Outcome {
    use feign_core::resilience::AdaptiveLimitConfig;

    let lb = balancer();
let orders = OrderServiceClient::builder()
    .load_balancer(lb)
    .adaptive_concurrency(AdaptiveLimitConfig::default()   // 20 at first, between 3 and 1000
        .max_limit(200)
        .tolerance(1.5))                                   // shrink past 1.5 × unloaded latency
    .build()?;
    Ok(())
}

/// "Hedged requests".
#[rustfmt::skip]
#[allow(unused_variables)]
pub fn hedging() -> Outcome {
    use std::time::Duration;

    let lb = balancer();
use feign_core::HedgingConfig;

let orders = OrderServiceClient::builder()
    .load_balancer(lb)
    .hedging(HedgingConfig::after(Duration::from_millis(50))) // .max_hedges(n): default 1
    .build()?;
    Ok(())
}

/// "Testing a client against a recording server": a test that also runs under
/// `cargo test -p readme-snippets`.
#[rustfmt::skip]
#[allow(dead_code, unused_imports, unreachable_pub)]    // used by the test alone
mod recording_server {
    use super::Order;

use std::time::Duration;

use feign_core::{feign_client, Error, Options, Retryer};
use feign_test::{Fault, Matcher, RecordingServer, Reply};

#[feign_client("order-service")]
#[headers("Accept: application/json")]
trait Orders {
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64, #[query] expand: &str) -> Result<Order, Error>;
}

#[tokio::test]
async fn get_order_retries_a_503_and_times_out_a_hang() {
    let server = RecordingServer::start().await;                    // 127.0.0.1:0
    server
        .on(Matcher::get("/orders/42").query("expand", "items"))
        .respond_in_order([Reply::status(503), Reply::ok().json(&Order { id: 42 })]);
    server.on(Matcher::get("/orders/7")).respond(Reply::fault(Fault::Hang));
    server.expect(Matcher::get("/orders/42").header("accept", "application/json")).times(2);

    let orders = OrdersClient::builder()
        .url(server.url())
        .retryer(Retryer::default().period(Duration::from_millis(5)).max_attempts(2))
        .options(Options::new().read_timeout(Duration::from_millis(200)))
        .build()
        .unwrap();

    assert_eq!(orders.get_order(42, "items").await.unwrap().id, 42);
    assert!(orders.get_order(7, "items").await.unwrap_err().is_timeout());
    server.verify();            // on failure: every request received, and how each differs
    assert_eq!(server.requests()[0].target, "/orders/42?expand=items");
}
}

/// "Live configuration".
#[rustfmt::skip]
#[allow(unused_variables)]
pub fn live_configuration() -> Outcome {
    use std::time::Duration;

use feign_config::LiveConfig;

let live = LiveConfig::load()?;                     // application.yml, …, then the environment
let watch = live.watch(Duration::from_secs(2))?;    // polls them; stops when dropped
let lb = LoadBalancer::builder()
    .static_lists([("order-service", vec!["http://127.0.0.1:8081"])])
    .build_live(&live)?;                            // rebuilt when spring.cloud.loadbalancer.* changes
let orders = OrderServiceClient::builder()
    .load_balancer(lb)
    .live_config(&live)                             // refreshed when refresh-enabled is true
    .build()?;
    Ok(())
}
