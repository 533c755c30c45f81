//! The any-client example, as a library so a test can run exactly what `cargo run -p
//! any-client` runs: Spring's `@LoadBalanced RestClient`, with feign-lb's balancer in front of
//! clients that know nothing of it.

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::net::SocketAddr;

use axum::extract::{Path, State};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use feign_lb::{LoadBalancedLayer, LoadBalancedMiddleware, LoadBalancer, StaticSupplier};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tower::{Layer, ServiceExt};

/// What a failed step returns: what it expected and what it saw.
pub type StepResult<T> = Result<T, Box<dyn StdError + Send + Sync>>;

/// What the example saw.
#[derive(Debug, Default)]
pub struct Report {
    /// How many of the reqwest client's calls each instance answered.
    pub reqwest_answers: BTreeMap<String, usize>,
    /// How many of the hyper client's calls each instance answered.
    pub hyper_answers: BTreeMap<String, usize>,
    /// Calls that failed after an instance stopped (retried elsewhere: none).
    pub errors_after_stop: usize,
    /// The instances the balancer ejected after the stop.
    pub ejected: Vec<u16>,
    /// What a call to a service with no instance got.
    pub unknown_service: String,
}

/// One instance of `order-service` on its own thread and runtime: stopping it closes its
/// listener and every connection, as a stopped process would.
struct Instance {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

async fn order(State(name): State<String>, Path(id): Path<u64>) -> String {
    format!("order {id} from {name}")
}

impl Instance {
    fn start(name: &str) -> StepResult<Instance> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let app = Router::new()
            .route("/orders/{id}", get(order))
            .with_state(name.to_owned());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = stopped => {}
                }
            });
        });
        Ok(Instance {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The instance named in an answer, `order 7 from b` → `b`.
fn answered_by(body: &str) -> String {
    body.rsplit(' ').next().unwrap_or_default().to_owned()
}

/// Runs every step, printing what happens.
pub async fn run() -> StepResult<Report> {
    let mut instances = ["a", "b", "c"]
        .iter()
        .map(|name| Instance::start(name))
        .collect::<StepResult<Vec<_>>>()?;
    let urls: Vec<String> = instances
        .iter()
        .map(|i| format!("http://{}", i.addr))
        .collect();
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::try_new("order-service", &urls)?)
        .build();
    let mut report = Report::default();

    // A plain reqwest client with the balancer as its middleware.
    let rest = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(LoadBalancedMiddleware::new(lb.clone()))
        .build();
    for id in 1..=6 {
        let url = format!("http://order-service/orders/{id}");
        let body = rest
            .get(&url)
            .send()
            .await?
            .error_for_status()?
            .text()
            .await?;
        println!("reqwest  GET {url} -> {body}");
        *report
            .reqwest_answers
            .entry(answered_by(&body))
            .or_default() += 1;
    }

    // A hyper client behind the balancer's tower layer.
    let hyper = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let balanced = LoadBalancedLayer::new(lb.clone()).layer(hyper);
    for id in 7..=9 {
        let url = format!("http://order-service/orders/{id}");
        let request = http::Request::get(&url).body(Full::default())?;
        let response = balanced.clone().oneshot(request).await?;
        let body = response.into_body().collect().await?.to_bytes();
        let body = String::from_utf8_lossy(&body).into_owned();
        println!("hyper    GET {url} -> {body}");
        *report.hyper_answers.entry(answered_by(&body)).or_default() += 1;
    }

    // An instance stops: its calls are retried on another one, and it is ejected.
    let stopped = instances.remove(0);
    let port = stopped.addr.port();
    drop(stopped);
    println!("instance a (port {port}) stopped");
    for id in 10..=15 {
        let url = format!("http://order-service/orders/{id}");
        match rest.get(&url).send().await {
            Ok(response) => println!("reqwest  GET {url} -> {}", response.text().await?),
            Err(error) => {
                println!("reqwest  GET {url} -> error: {error}");
                report.errors_after_stop += 1;
            }
        }
    }
    report.ejected = lb
        .instance_states("order-service")
        .iter()
        .filter(|s| s.ejected)
        .map(|s| s.instance.port())
        .collect();
    println!("ejected: {:?}", report.ejected);

    // A name with no instance is an error, as with Spring's @LoadBalanced clients.
    let unknown = rest.get("http://billing-service/invoices/1").send().await;
    report.unknown_service = match unknown {
        Ok(response) => format!("unexpected answer {}", response.status()),
        Err(error) => error.to_string(),
    };
    println!(
        "reqwest  GET http://billing-service/invoices/1 -> {}",
        report.unknown_service
    );

    check(&report, port)?;
    Ok(report)
}

/// Fails the run when a step did not behave as printed.
fn check(report: &Report, stopped_port: u16) -> StepResult<()> {
    if report.reqwest_answers.len() != 3 || report.hyper_answers.len() != 3 {
        return Err(format!("calls did not reach every instance: {report:?}").into());
    }
    if report.errors_after_stop != 0 {
        return Err(format!("{} calls failed after the stop", report.errors_after_stop).into());
    }
    if report.ejected != [stopped_port] {
        return Err(format!("expected port {stopped_port} ejected: {:?}", report.ejected).into());
    }
    if !report.unknown_service.contains("billing-service") {
        return Err(format!("unknown service: {}", report.unknown_service).into());
    }
    Ok(())
}
