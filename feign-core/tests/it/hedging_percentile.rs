//! Hedging at a percentile of a method's recent latency, on loopback: two instances answering
//! in about 20 ms, the first of which turns slow once the client has seen enough calls. The
//! hedge then goes out near the measured percentile rather than at the fixed fallback delay;
//! before warm-up the fallback is used, `min_delay` floors the percentile, and a percentile
//! out of range fails `build()`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use feign_core::{feign_client, Error, HedgingConfig};
use feign_test_support::Server;

use crate::config_hedging::{config, InOrder};

#[feign_client("order-service")]
trait Orders {
    #[get("/order")]
    async fn order(&self) -> Result<String, Error>;
}

/// The instances' usual latency.
const USUAL: Duration = Duration::from_millis(20);
/// The first instance's latency once it turns slow.
const SLOW: Duration = Duration::from_secs(3);
/// The fixed delay used before warm-up.
const FALLBACK: Duration = Duration::from_millis(800);

/// A server whose `/order` answers `name` after the delay in `millis`, read at each request.
async fn server(name: &'static str, millis: Arc<AtomicU64>) -> Server {
    Server::start(Router::new().route(
        "/order",
        get(move || {
            let delay = Duration::from_millis(millis.load(Ordering::Relaxed));
            async move {
                tokio::time::sleep(delay).await;
                name
            }
        }),
    ))
    .await
}

/// Instance `a`, which every call tries first, and `b`, where hedges go.
struct Pair {
    first_delay: Arc<AtomicU64>,
    a: Server,
    b: Server,
}

impl Pair {
    async fn start() -> Pair {
        let usual = || Arc::new(AtomicU64::new(USUAL.as_millis() as u64));
        let first_delay = usual();
        let a = server("a", first_delay.clone()).await;
        let b = server("b", usual()).await;
        Pair { first_delay, a, b }
    }

    fn resolver(&self) -> InOrder {
        InOrder(vec![("a", self.a.url()), ("b", self.b.url())])
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
            assert_eq!(client.order().await.unwrap(), "a");
        }
    }

    /// Turns `a` slow, makes one call and returns how long it took; `b` answered it.
    async fn hedged_call(&self, client: &OrdersClient) -> Duration {
        self.first_delay
            .store(SLOW.as_millis() as u64, Ordering::Relaxed);
        let started = Instant::now();
        let answer = client.order().await.unwrap();
        let took = started.elapsed();
        assert_eq!(answer, "b", "took {took:?}");
        took
    }
}

fn p90() -> HedgingConfig {
    HedgingConfig::after(FALLBACK).percentile(0.9)
}

#[tokio::test]
async fn once_warmed_up_the_hedge_goes_out_near_the_measured_percentile() {
    let pair = Pair::start().await;
    let client = pair.client(p90());
    pair.warm_up(&client, HedgingConfig::WARM_UP_SAMPLES).await;
    let took = pair.hedged_call(&client).await;
    // The hedge waited for p90 of `a`'s latencies (at least 20 ms), then `b` took 20 ms:
    // well before the fallback delay would have sent it.
    assert!(
        took >= 2 * USUAL - Duration::from_millis(2),
        "took {took:?}"
    );
    assert!(took < FALLBACK / 2, "took {took:?}");
}

#[tokio::test]
async fn before_warm_up_the_fallback_delay_is_used() {
    let pair = Pair::start().await;
    let client = pair.client(p90());
    pair.warm_up(&client, HedgingConfig::WARM_UP_SAMPLES - 1)
        .await;
    let took = pair.hedged_call(&client).await;
    assert!(took >= FALLBACK, "took {took:?}");
    assert!(took < SLOW, "took {took:?}");
}

#[tokio::test]
async fn min_delay_floors_the_percentile() {
    let pair = Pair::start().await;
    let floor = Duration::from_millis(300);
    let client = pair.client(p90().min_delay(floor));
    pair.warm_up(&client, HedgingConfig::WARM_UP_SAMPLES).await;
    let took = pair.hedged_call(&client).await;
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
    let took = pair.hedged_call(&client).await;
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
