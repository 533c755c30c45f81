//! Hedging at a percentile of a method's recent latency, on loopback: two instances answering
//! after the delay each call asks for, the first of which turns slow once the client has seen
//! enough calls. The hedge then goes out at the window's percentile, told apart from the ranks
//! beside it, rather than at the fixed fallback delay; a first attempt a hedge beat is recorded
//! as long as its call; before warm-up the fallback is used, `min_delay` floors the percentile,
//! and a percentile out of range fails `build()`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::Query;
use axum::routing::get;
use axum::Router;
use feign_core::{feign_client, Error, HedgingConfig};
use feign_test_support::Server;

use crate::config_hedging::{config, InOrder};

#[feign_client("order-service")]
trait Orders {
    /// Answered after `delay` ms (or, by a slow instance, after [`SLOW`]).
    #[get("/order")]
    async fn order(&self, #[query("delay")] delay: u64) -> Result<String, Error>;
}

/// The instances' usual latency.
const USUAL: Duration = Duration::from_millis(20);
/// The first instance's latency once it turns slow.
const SLOW: Duration = Duration::from_secs(3);
/// The fixed delay used before warm-up.
const FALLBACK: Duration = Duration::from_millis(800);

/// One instance: answers `/order?delay=ms` with its name after that delay, or after [`SLOW`]
/// once turned slow, and notes when each request arrived.
struct Instance {
    server: Server,
    slow: Arc<AtomicBool>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
}

impl Instance {
    async fn start(name: &'static str) -> Instance {
        let slow = Arc::new(AtomicBool::new(false));
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let (is_slow, noted) = (slow.clone(), arrivals.clone());
        let router = Router::new().route(
            "/order",
            get(move |Query(query): Query<HashMap<String, u64>>| {
                noted.lock().unwrap().push(Instant::now());
                let delay = match is_slow.load(Ordering::SeqCst) {
                    true => SLOW,
                    false => Duration::from_millis(query.get("delay").copied().unwrap_or(0)),
                };
                async move {
                    tokio::time::sleep(delay).await;
                    name
                }
            }),
        );
        Instance {
            server: Server::start(router).await,
            slow,
            arrivals,
        }
    }

    /// When its latest request arrived.
    fn last_arrival(&self) -> Instant {
        *self
            .arrivals
            .lock()
            .unwrap()
            .last()
            .expect("a request arrived")
    }
}

/// Instance `a`, which every call tries first, and `b`, where hedges go.
struct Pair {
    a: Instance,
    b: Instance,
}

impl Pair {
    async fn start() -> Pair {
        Pair {
            a: Instance::start("a").await,
            b: Instance::start("b").await,
        }
    }

    fn resolver(&self) -> InOrder {
        InOrder(vec![("a", self.a.server.url()), ("b", self.b.server.url())])
    }

    fn client(&self, hedging: HedgingConfig) -> OrdersClient {
        OrdersClient::builder()
            .load_balancer(self.resolver())
            .hedging(hedging)
            .build()
            .unwrap()
    }

    /// `calls` calls, one after another, all answered by `a` in its usual time.
    async fn warm_up(&self, client: &OrdersClient, calls: usize) {
        for _ in 0..calls {
            assert_eq!(client.order(USUAL.as_millis() as u64).await.unwrap(), "a");
        }
    }

    /// Turns `a` slow, makes one call answered by `b` after `b_delay` and returns how long the
    /// call took and how long after its request reached `a` the hedge reached `b`.
    async fn hedged_call(&self, client: &OrdersClient, b_delay: Duration) -> (Duration, Duration) {
        self.a.slow.store(true, Ordering::SeqCst);
        let started = Instant::now();
        let answer = client.order(b_delay.as_millis() as u64).await.unwrap();
        let took = started.elapsed();
        assert_eq!(answer, "b", "took {took:?}");
        let gap = self.b.last_arrival() - self.a.last_arrival();
        (took, gap)
    }
}

fn p90() -> HedgingConfig {
    HedgingConfig::after(FALLBACK).percentile(0.9)
}

/// Makes `delays.len()` calls answered by `a` after those delays, ten at a time; returns each
/// call's duration as the client saw it.
async fn calls_answered_after(client: &OrdersClient, delays: &[u64]) -> Vec<Duration> {
    let mut took = Vec::new();
    for group in delays.chunks(10) {
        let calls = group.iter().map(|&delay| async move {
            let started = Instant::now();
            assert_eq!(client.order(delay).await.unwrap(), "a");
            started.elapsed()
        });
        took.extend(futures_util::future::join_all(calls).await);
    }
    took
}

/// The window holds the last 1,000 first-attempt latencies and hedges at their nearest-rank
/// p90: of 100 calls, the 90th shortest. Here 89 calls take 5 ms, one 40 ms and ten 150 ms,
/// so p90 is the 40 ms call, whose latency as recorded lies between what the server took
/// (40 ms) and what the client saw of the call: one rank lower is a 5 ms call, one higher a
/// 150 ms one. The hedge must reach `b` that long after the first attempt reached `a`
/// (give or take their way over loopback).
#[tokio::test]
async fn once_warmed_up_the_hedge_waits_for_the_windows_p90() {
    let pair = Pair::start().await;
    let client = pair.client(p90());
    let mut delays = vec![5; 89];
    delays.push(40);
    delays.extend([150; 10]);
    assert_eq!(delays.len(), HedgingConfig::WARM_UP_SAMPLES);
    let mut seen = calls_answered_after(&client, &delays).await;
    seen.sort();
    // The 90th shortest call as the client saw it: the most the window can have recorded at
    // that rank.
    let p90_seen = seen[89];
    let (took, gap) = pair.hedged_call(&client, Duration::from_millis(5)).await;
    assert!(
        gap >= Duration::from_millis(35),
        "the hedge reached b {gap:?} after the first attempt reached a: under the p90 of 40 ms"
    );
    assert!(
        gap <= p90_seen + Duration::from_millis(50),
        "the hedge reached b {gap:?} after the first attempt reached a: over the p90, at most \
         {p90_seen:?} (the next rank is 150 ms)"
    );
    assert!(took >= gap, "took {took:?}");
}

/// A first attempt that a hedge beat counts in the window as lasting as long as the call did
/// (it lasted at least that long): after 100 calls of 30 ms, 20 calls whose first attempt hangs
/// are answered by the hedge, sent after about 30 ms, 100 ms later. Those 20 of 120 are over a
/// tenth, so the next hedge waits for their recorded latency, at least 30 + 100 ms. Had the
/// window kept the hedge's own 100 ms, or the 30 ms until it was sent, or nothing, the next
/// hedge would go out well before.
#[tokio::test]
async fn a_first_attempt_beaten_by_a_hedge_counts_as_long_as_the_call() {
    let pair = Pair::start().await;
    let client = pair.client(p90());
    calls_answered_after(&client, &[30; 100]).await;
    pair.a.slow.store(true, Ordering::SeqCst);
    let hedged = (0..20).map(|_| client.order(100));
    for answer in futures_util::future::join_all(hedged).await {
        assert_eq!(answer.unwrap(), "b");
    }
    let (_, gap) = pair.hedged_call(&client, Duration::from_millis(5)).await;
    assert!(
        gap >= Duration::from_millis(125),
        "the hedge reached b {gap:?} after the first attempt reached a: the beaten attempts \
         were recorded shorter than their calls (at least 130 ms)"
    );
}

#[tokio::test]
async fn before_warm_up_the_fallback_delay_is_used() {
    let pair = Pair::start().await;
    let client = pair.client(p90());
    pair.warm_up(&client, HedgingConfig::WARM_UP_SAMPLES - 1)
        .await;
    let (took, _) = pair.hedged_call(&client, USUAL).await;
    assert!(took >= FALLBACK, "took {took:?}");
    assert!(took < SLOW, "took {took:?}");
}

#[tokio::test]
async fn min_delay_floors_the_percentile() {
    let pair = Pair::start().await;
    let floor = Duration::from_millis(300);
    let client = pair.client(p90().min_delay(floor));
    pair.warm_up(&client, HedgingConfig::WARM_UP_SAMPLES).await;
    let (took, _) = pair.hedged_call(&client, USUAL).await;
    assert!(took >= floor, "took {took:?}");
    assert!(took < FALLBACK, "took {took:?}");
}

#[tokio::test]
async fn the_percentile_and_its_floor_come_from_the_file() {
    let pair = Pair::start().await;
    let config = config(
        "feign.client.config.order-service.hedging:\n  enabled: true\n  delay: 800ms\n  percentile: p90\n  min-delay: 300ms\n",
    );
    let client = OrdersClient::builder()
        .load_balancer(pair.resolver())
        .config(&config)
        .unwrap()
        .build()
        .unwrap();
    pair.warm_up(&client, HedgingConfig::WARM_UP_SAMPLES).await;
    let (took, _) = pair.hedged_call(&client, USUAL).await;
    assert!(took >= Duration::from_millis(300), "took {took:?}");
    assert!(took < FALLBACK, "took {took:?}");
}

#[tokio::test]
async fn a_percentile_out_of_range_fails_build() {
    let pair = Pair::start().await;
    for q in [0.0, 1.0, 1.5, -0.1, f64::NAN] {
        let error = OrdersClient::builder()
            .load_balancer(pair.resolver())
            .hedging(HedgingConfig::after(FALLBACK).percentile(q))
            .build()
            .err()
            .unwrap_or_else(|| panic!("percentile {q} was accepted"));
        assert!(
            error
                .to_string()
                .contains("hedging percentile must be between 0 and 1"),
            "{error}"
        );
    }
}
