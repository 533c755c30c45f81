//! The quickstart's steps, in the order it prints them.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use feign_core::{feign_client, BearerAuth, Error, ErrorDecoder, Response};
use feign_eureka::EurekaClient;
use feign_eureka_server::EurekaServer;
use feign_lb::{LoadBalancer, Policy};

use crate::instance::{Conflict, Instance, NewOrder, Order};
use crate::{expect, wait_for, StepResult, TOKEN};

/// The order service as callers see it. No URL: `order-service` is resolved through Eureka.
#[feign_client("order-service")]
#[headers("Accept: application/json")]
pub trait OrderService {
    /// One order by id.
    #[get("/orders/{id}")]
    async fn get_order(&self, #[path] id: u64) -> Result<Order, OrderError>;

    /// Places an order; a sold-out item is [`OrderError::Conflict`].
    #[post("/orders")]
    async fn create(&self, #[body] order: &NewOrder) -> Result<Order, OrderError>;
}

/// The error callers of [`OrderService`] handle: the service's own conflict, or anything else.
#[derive(Debug)]
pub enum OrderError {
    /// The service answered 409 with a reason.
    Conflict {
        /// Why.
        reason: String,
        /// How many are left.
        available: u32,
    },
    /// Any other failure of the call.
    Call(Error),
}

impl fmt::Display for OrderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OrderError::Conflict { reason, available } => {
                write!(f, "conflict: {reason} ({available} left)")
            }
            OrderError::Call(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for OrderError {}

/// The 409 body, carried through `feign_core::Error` by the error decoder.
#[derive(Debug)]
struct ConflictError(Conflict);

impl fmt::Display for ConflictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "conflict: {}", self.0.reason)
    }
}

impl std::error::Error for ConflictError {}

impl From<Error> for OrderError {
    fn from(err: Error) -> Self {
        match err.downcast_ref::<ConflictError>() {
            Some(ConflictError(conflict)) => OrderError::Conflict {
                reason: conflict.reason.clone(),
                available: conflict.available,
            },
            None => OrderError::Call(err),
        }
    }
}

/// Turns a 409 with a JSON body into [`ConflictError`]; everything else as the default does.
struct ConflictDecoder;

impl ErrorDecoder for ConflictDecoder {
    fn decode(&self, method_key: &str, response: Response) -> Error {
        if response.status() == 409 {
            if let Ok(conflict) = serde_json::from_slice::<Conflict>(response.body()) {
                return Error::custom(ConflictError(conflict));
            }
        }
        feign_core::codec::DefaultErrorDecoder::default().decode(method_key, response)
    }
}

/// How to run the quickstart.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Keep the registry and instances running after the steps, until Ctrl-C, so a person can
    /// open the dashboard.
    pub keep_running: bool,
}

/// What the steps observed, for the test that runs them.
#[derive(Debug, Default)]
pub struct Report {
    /// Calls each instance answered in the first step.
    pub spread: BTreeMap<String, usize>,
    /// Calls of the burst that failed (must be zero).
    pub burst_failures: usize,
    /// Calls of the burst that succeeded.
    pub burst_successes: usize,
    /// Instances the registry lists at the end.
    pub registered_at_end: usize,
    /// How long the stopped instance's deregistration took, from the registry's answer, to
    /// reach the caller's instance list (push discovery).
    pub change_reached_caller: Duration,
}

/// Runs every step, printing a few lines each; fails on the first step that misbehaves.
pub async fn run(options: Options) -> StepResult<Report> {
    let started = Instant::now();
    let mut report = Report::default();

    let registry = EurekaServer::builder()
        .bind("127.0.0.1:0")
        .read_only_cache(false)
        .self_preservation(false)
        .eviction_interval(Duration::from_secs(1))
        .start()
        .await?;
    let eureka_url = registry.url().to_owned();
    println!("registry     {eureka_url} (embedded)");

    let mut instances = Vec::new();
    for (zone, version) in [("zone-a", "v1"), ("zone-a", "v2"), ("zone-b", "v1")] {
        let instance = Instance::start(&eureka_url, zone, version).await?;
        println!(
            "instance     {} zone={zone} version={version} registered",
            instance.id
        );
        instances.push(instance);
    }

    // Push discovery: the client watches the registry, which answers as soon as an instance
    // comes or goes; it would poll only every 30 s (Eureka's default) if the watch failed.
    let discovery = EurekaClient::builder()
        .service_urls([eureka_url.as_str()])
        .watch(true)
        .start()
        .await?;
    wait_for(
        || count_instances(&discovery) == 3,
        "3 instances discovered",
    )
    .await?;

    let balancer = LoadBalancer::builder()
        .supplier(discovery.supplier())
        .policy(Policy::RoundRobin)
        .build();
    let orders = OrderServiceClient::builder()
        .load_balancer(balancer.clone())
        .interceptor(BearerAuth::new(TOKEN))
        .error_decoder(ConflictDecoder)
        .build()?;

    println!("\n1. calls spread across instances (round robin, resolved through Eureka)");
    for id in 0..30 {
        let order = orders.get_order(id).await?;
        *report.spread.entry(order.served_by).or_default() += 1;
    }
    for (instance, calls) in &report.spread {
        println!("   {instance:<16} {calls} calls");
    }
    expect(
        report.spread.len() == 3,
        format!("all 3 instances to serve calls, saw {:?}", report.spread),
    )?;

    println!("\n2. an interceptor adds the Authorization header the instances check");
    let anonymous = OrderServiceClient::builder()
        .load_balancer(balancer.clone())
        .build()?;
    match anonymous.get_order(1).await {
        Err(OrderError::Call(err)) if err.status().is_some_and(|s| s == 401) => {
            println!("   without BearerAuth: {err}");
        }
        other => return Err(format!("expected a 401 without the token, got {other:?}").into()),
    }
    let order = orders.get_order(1).await?;
    println!(
        "   with BearerAuth:    order {} from {}",
        order.id, order.served_by
    );

    println!("\n3. a custom ErrorDecoder turns a 409 JSON body into a typed error");
    let sold_out = NewOrder {
        item: "sold-out".to_owned(),
    };
    match orders.create(&sold_out).await {
        Err(OrderError::Conflict { reason, available }) => {
            println!("   OrderError::Conflict {{ reason: {reason:?}, available: {available} }}");
        }
        other => return Err(format!("expected OrderError::Conflict, got {other:?}").into()),
    }

    println!("\n4. an instance stops in the middle of a burst of calls");
    let victim = instances.remove(2);
    let victim_id = victim.id.clone();
    let before = balancer.counters("order-service").unwrap_or_default();
    let gone = {
        let (discovery, victim_id) = (discovery.clone(), victim_id.clone());
        tokio::spawn(async move { unlisted(&discovery, &victim_id).await })
    };
    let (successes, failures, deregistered) = burst_with_stop(&orders, victim).await?;
    let gone = tokio::time::timeout(Duration::from_secs(10), gone)
        .await
        .map_err(|_| "timed out waiting for the caller to drop the stopped instance")??;
    report.change_reached_caller = gone.saturating_duration_since(deregistered);
    let after = balancer.counters("order-service").unwrap_or_default();
    report.burst_successes = successes;
    report.burst_failures = failures;
    println!(
        "   stopped {victim_id} after 40 of 120 calls: {successes} succeeded, {failures} failed"
    );
    println!(
        "   attempts that failed on the way: {}, retried on another instance: {}",
        after.failed - before.failed,
        after.retries - before.retries
    );
    println!(
        "   the deregistration reached the caller {:.1} ms after the registry took it (push discovery)",
        report.change_reached_caller.as_secs_f64() * 1000.0
    );
    expect(failures == 0, format!("no failed call, saw {failures}"))?;
    wait_for(
        || registry.instance_count() == 2,
        "the registry to list 2 instances",
    )
    .await?;
    report.registered_at_end = registry.instance_count();
    println!(
        "   the registry now lists {} instances; {victim_id} is gone",
        report.registered_at_end
    );

    // The dashboard's URL only while it is served: the registry stops when the steps end.
    if options.keep_running {
        println!("\ndashboard    {}", registry.dashboard_url());
        println!("keeping everything running; press Ctrl-C to stop");
        tokio::signal::ctrl_c().await?;
    } else {
        println!(
            "\n(`cargo run -p quickstart -- --keep-running` keeps the registry's dashboard up)"
        );
    }

    for instance in instances {
        instance.stop().await?;
    }
    discovery.shutdown().await;
    registry.shutdown().await;
    println!("\ndone in {:.1} s", started.elapsed().as_secs_f64());
    Ok(report)
}

/// When the caller's instance list no longer holds `id` (checked every millisecond).
async fn unlisted(discovery: &EurekaClient, id: &str) -> Instant {
    loop {
        let listed = discovery
            .instances("order-service")
            .is_some_and(|instances| instances.iter().any(|i| i.instance_id() == id));
        if !listed {
            return Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// 120 calls, four at a time; the victim stops after the 40th has been sent. Returns the calls
/// that succeeded and failed, and when the registry answered the victim's deregistration.
async fn burst_with_stop(
    orders: &OrderServiceClient,
    victim: Instance,
) -> StepResult<(usize, usize, Instant)> {
    const CALLS: usize = 120;
    let next = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..4 {
        let orders = orders.clone();
        let next = next.clone();
        let failures = failures.clone();
        workers.push(tokio::spawn(async move {
            let mut ok = 0;
            while next.fetch_add(1, Ordering::Relaxed) < CALLS {
                match orders.get_order(7).await {
                    Ok(_) => ok += 1,
                    Err(err) => {
                        eprintln!("   call failed: {err}");
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            ok
        }));
    }
    while next.load(Ordering::Relaxed) < 40 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let deregistered = victim.stop().await?;
    let mut successes = 0;
    for worker in workers {
        successes += worker.await?;
    }
    Ok((successes, failures.load(Ordering::Relaxed), deregistered))
}

fn count_instances(discovery: &EurekaClient) -> usize {
    discovery
        .instances("order-service")
        .map_or(0, |instances| instances.len())
}
