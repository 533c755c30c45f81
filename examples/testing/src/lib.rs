//! The testing example's scenario: an order-service client against recording servers.
//!
//! Each step scripts a server, calls the generated client, and checks what the server received
//! and what the client returned; a step that does not behave as it says is an error.

use std::error::Error as StdError;
use std::time::Duration;

use feign_core::{feign_client, Error, Options, Retryer};
use feign_test::{Fault, Fleet, Matcher, RecordingServer, Reply};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// What a failed step returns.
pub type Failure = Box<dyn StdError + Send + Sync>;

/// An order, as the service returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    /// The order's id.
    pub id: u64,
    /// What was ordered.
    pub item: String,
}

/// The client under test.
#[feign_client("order-service")]
#[headers("Accept: application/json")]
pub trait OrderService {
    /// One order.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, Error>;

    /// Creates an order for a tenant.
    #[post("/orders")]
    async fn create(
        &self,
        #[body] order: &Order,
        #[header("X-Tenant")] tenant: &str,
    ) -> Result<Order, Error>;
}

/// What the scenario saw.
#[derive(Debug, Default)]
pub struct Report {
    /// The steps that behaved, in order.
    pub steps: Vec<&'static str>,
    /// The requests the retried call took (a 503, then a 200).
    pub retried_requests: usize,
    /// The requests each instance of the fleet received, the resetting one first.
    pub fleet_requests: Vec<usize>,
}

/// Runs every step; the first that misbehaves ends the run with its error.
pub async fn run() -> Result<Report, Failure> {
    let mut report = Report::default();
    let server = RecordingServer::start().await;
    println!("order-service stand-in at {}", server.url());

    exact_request(&server).await?;
    report.steps.push("the POST went out as expected");
    println!("1. the POST went out with its path, header and JSON body");

    report.retried_requests = retried(&server).await?;
    report.steps.push("a 503 was retried");
    println!("2. a 503 was retried: {} requests", report.retried_requests);

    timed_out(&server).await?;
    report.steps.push("a slow answer timed out");
    println!("3. an answer slower than the read timeout timed out");

    server.verify();
    report.fleet_requests = failed_over().await?;
    report.steps.push("a reset instance was failed over");
    println!(
        "4. a balanced client got every answer while one instance reset its connections: {:?} requests",
        report.fleet_requests
    );
    Ok(report)
}

fn client(url: &str, read: Duration, retryer: Retryer) -> Result<OrderServiceClient, Error> {
    OrderServiceClient::builder()
        .url(url)
        .options(Options::new().read_timeout(read))
        .retryer(retryer)
        .build()
}

fn order() -> Order {
    Order {
        id: 42,
        item: "book".to_owned(),
    }
}

/// The client sends the path, tenant header and JSON body the service expects.
async fn exact_request(server: &RecordingServer) -> Result<(), Failure> {
    let expected = Matcher::post("/orders")
        .header("x-tenant", "acme")
        .header("accept", "application/json")
        .json_body(json!({ "id": 42, "item": "book" }));
    server
        .on(expected.clone())
        .respond(Reply::status(201).json(&order()));
    server.expect(expected).times(1);
    let orders = client(&server.url(), Duration::from_secs(2), Retryer::never())?;

    let created = orders.create(&order(), "acme").await?;
    if created != order() {
        return Err(format!("created {created:?}, expected {:?}", order()).into());
    }
    Ok(())
}

/// A 503 then a 200: the retryer tries again and the call succeeds. Returns the requests.
async fn retried(server: &RecordingServer) -> Result<usize, Failure> {
    let path = Matcher::get("/orders/42");
    server
        .on(path.clone())
        .respond_in_order([Reply::status(503), Reply::ok().json(&order())]);
    server.expect(path.clone()).times(2);
    let retryer = Retryer::default()
        .period(Duration::from_millis(5))
        .max_attempts(3);
    let orders = client(&server.url(), Duration::from_secs(2), retryer)?;

    orders.get_order(42).await?;
    Ok(server.received(&path).len())
}

/// An answer delayed past the read timeout is a timeout error, not a late success.
async fn timed_out(server: &RecordingServer) -> Result<(), Failure> {
    server
        .on(Matcher::get("/orders/7"))
        .respond(Reply::ok().json(&order()).delay(Duration::from_secs(5)));
    let orders = client(&server.url(), Duration::from_millis(200), Retryer::never())?;

    match orders.get_order(7).await {
        Err(error) if error.is_timeout() => Ok(()),
        other => Err(format!("expected a timeout, got {other:?}").into()),
    }
}

/// Two instances, the first resetting every connection: each balanced call still succeeds.
/// Returns the requests each instance received.
async fn failed_over() -> Result<Vec<usize>, Failure> {
    let fleet = Fleet::start("order-service", 2).await;
    fleet[0]
        .on(Matcher::any())
        .respond(Reply::fault(Fault::Reset));
    fleet[1]
        .on(Matcher::get("/orders/42"))
        .respond(Reply::ok().json(&order()));
    let orders = OrderServiceClient::builder()
        .load_balancer(fleet.load_balancer())
        .options(Options::new().read_timeout(Duration::from_secs(2)))
        .build()?;

    for _ in 0..4 {
        orders.get_order(42).await?;
    }
    let counts = fleet.request_counts();
    if counts[1] != 4 || counts[0] == 0 {
        return Err(format!(
            "requests per instance {counts:?}: expected some on the first, 4 on the second"
        )
        .into());
    }
    Ok(counts)
}
