//! The resilience example, as a library so a test can run exactly what `cargo run -p
//! resilience` runs.
//!
//! A local `order-service` answers `GET /orders/{id}/status`; the example makes it healthy,
//! failing or slow, and calls it through `#[feign_client]` with:
//! - a fallback (`fallback = CachedStatus`) that answers whenever the service fails (5xx, a
//!   timeout, a refused connection), the breaker is open or the bulkhead is full;
//! - a circuit breaker, Resilience4j's state machine with a small window so it acts in seconds;
//! - a bulkhead of 5 calls in flight, refusing the rest at once.

use std::error::Error as StdError;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use feign_core::{feign_client, BulkheadConfig, CircuitBreakerConfig, Error, Retryer};
use tokio::sync::broadcast::error::TryRecvError;

/// What a failed step returns: what it expected and what it saw.
pub type StepResult<T> = Result<T, Box<dyn StdError + Send + Sync>>;

/// The client's view of the service.
#[feign_client("order-service", fallback = CachedStatus)]
pub trait OrderService {
    /// The status of an order.
    #[get("/orders/{id}/status")]
    async fn status(&self, #[path] id: u64) -> Result<String, Error>;
}

/// Answers for the service when it cannot: a status that says it is not known right now.
#[derive(Debug, Default)]
pub struct CachedStatus;

/// What the fallback answers.
pub const UNKNOWN: &str = "unknown (order-service unavailable)";

#[feign_core::async_trait]
impl OrderService for CachedStatus {
    async fn status(&self, _id: u64) -> Result<String, Error> {
        Ok(UNKNOWN.to_owned())
    }
}

/// What the example saw, step by step.
#[derive(Debug, Default)]
pub struct Report {
    /// Calls the healthy service answered itself.
    pub healthy_calls: usize,
    /// Requests that reached the service while the breaker was open.
    pub requests_while_open: usize,
    /// Calls the half-open breaker let through to probe the service.
    pub trial_calls: usize,
    /// Concurrent calls the bulkhead let in, and the ones it refused.
    pub bulkhead_admitted: usize,
    /// See `bulkhead_admitted`.
    pub bulkhead_refused: usize,
    /// The breaker's state transitions, as `from -> to`.
    pub transitions: Vec<String>,
}

const HEALTHY: u8 = 0;
const FAILING: u8 = 1;
const SLOW: u8 = 2;

/// The local service: its health, and the requests it received.
#[derive(Clone, Default)]
struct Service {
    health: Arc<AtomicU8>,
    requests: Arc<AtomicUsize>,
}

async fn status(State(service): State<Service>, Path(id): Path<u64>) -> (StatusCode, String) {
    service.requests.fetch_add(1, Ordering::SeqCst);
    match service.health.load(Ordering::SeqCst) {
        FAILING => (StatusCode::SERVICE_UNAVAILABLE, "down".to_owned()),
        SLOW => {
            tokio::time::sleep(Duration::from_millis(500)).await;
            (StatusCode::OK, format!("order {id}: shipped"))
        }
        _ => (StatusCode::OK, format!("order {id}: shipped")),
    }
}

fn expect(ok: bool, what: impl Into<String>) -> StepResult<()> {
    if ok {
        Ok(())
    } else {
        Err(format!("expected {}", what.into()).into())
    }
}

/// Runs every step and prints what happens.
pub async fn run() -> StepResult<Report> {
    let service = Service::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let app = Router::new()
        .route("/orders/{id}/status", get(status))
        .with_state(service.clone());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let breaker = CircuitBreakerConfig::default()
        .sliding_window_size(10)
        .minimum_number_of_calls(10)
        .wait_duration_in_open_state(Duration::from_secs(1))
        .permitted_number_of_calls_in_half_open_state(3);
    let mut events = breaker.subscribe();
    let orders = OrderServiceClient::builder()
        .url(&url)
        .retryer(Retryer::never())
        .circuit_breaker(breaker)
        .bulkhead(BulkheadConfig::default().max_concurrent_calls(5))
        .build()?;
    let mut report = Report::default();
    println!("order-service at {url}; breaker: 50 % of 10 calls, 1 s open, 3 trials; bulkhead: 5");

    println!("\n1. The service is healthy");
    for id in 1..=10 {
        let answer = orders.status(id).await?;
        expect(
            answer.ends_with("shipped"),
            format!("the service's answer, got {answer:?}"),
        )?;
        report.healthy_calls += 1;
    }
    println!("   10 calls answered by the service");

    println!("\n2. The service fails: the fallback answers, then the breaker opens");
    service.health.store(FAILING, Ordering::SeqCst);
    for id in 1..=10 {
        let answer = orders.status(id).await?;
        expect(
            answer == UNKNOWN,
            format!("the fallback's answer, got {answer:?}"),
        )?;
    }
    let before = service.requests.load(Ordering::SeqCst);
    for id in 1..=100 {
        let answer = orders.status(id).await?;
        expect(
            answer == UNKNOWN,
            format!("the fallback's answer, got {answer:?}"),
        )?;
    }
    report.requests_while_open = service.requests.load(Ordering::SeqCst) - before;
    expect(
        report.requests_while_open == 0,
        format!("no request while open, got {}", report.requests_while_open),
    )?;
    println!("   100 more calls answered by the fallback, none sent");

    println!("\n3. The service recovers: after 1 s the breaker lets 3 trial calls through");
    service.health.store(HEALTHY, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let before = service.requests.load(Ordering::SeqCst);
    for id in 1..=3 {
        let answer = orders.status(id).await?;
        expect(
            answer.ends_with("shipped"),
            format!("the service's answer, got {answer:?}"),
        )?;
    }
    report.trial_calls = service.requests.load(Ordering::SeqCst) - before;
    println!(
        "   {} trial calls succeeded: closed again",
        report.trial_calls
    );

    println!("\n4. The service is slow: 50 concurrent calls, 5 in flight at most");
    service.health.store(SLOW, Ordering::SeqCst);
    let before = service.requests.load(Ordering::SeqCst);
    let calls: Vec<_> = (1..=50)
        .map(|id| {
            let orders = orders.clone();
            tokio::spawn(async move { orders.status(id).await })
        })
        .collect();
    for call in calls {
        if call.await?? == UNKNOWN {
            report.bulkhead_refused += 1;
        }
    }
    report.bulkhead_admitted = service.requests.load(Ordering::SeqCst) - before;
    expect(
        (report.bulkhead_admitted, report.bulkhead_refused) == (5, 45),
        format!(
            "5 calls admitted and 45 refused, got {} and {}",
            report.bulkhead_admitted, report.bulkhead_refused
        ),
    )?;
    println!("   5 answered by the service, 45 refused at once and answered by the fallback");

    println!("\nThe breaker's transitions:");
    loop {
        match events.try_recv() {
            Ok(transition) => {
                let line = format!("{} -> {}", transition.from.as_str(), transition.to.as_str());
                println!("   {}: {line}", transition.breaker);
                report.transitions.push(line);
            }
            Err(TryRecvError::Lagged(_)) => continue,
            Err(_) => break,
        }
    }
    expect(
        report.transitions == ["closed -> open", "open -> half_open", "half_open -> closed"],
        format!("three transitions, got {:?}", report.transitions),
    )?;
    server.abort();
    Ok(report)
}
