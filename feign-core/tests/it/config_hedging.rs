//! `Builder::config` for hedged requests: `hedging.enabled`, `hedging.delay`,
//! `hedging.max-hedges`, `hedging.percentile` and `hedging.min-delay` in a client's section,
//! read from real files and checked against slow and fast loopback servers behind a resolver,
//! and their errors (the percentile at work is in `hedging_percentile.rs`).

use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use feign_core::config::Config;
use feign_core::resolve::{ChooseRequest, Chosen, Resolver};
use feign_core::{feign_client, Error, HedgingConfig};
use feign_test_support::{Server, TempDir};

#[feign_client("order-service")]
trait Orders {
    #[get("/order")]
    async fn order(&self) -> Result<String, Error>;
}

const SLOW: Duration = Duration::from_millis(600);

/// A server whose `/order` answers `name` after `delay`.
async fn server(name: &'static str, delay: Duration) -> Server {
    Server::start(Router::new().route(
        "/order",
        get(move || async move {
            tokio::time::sleep(delay).await;
            name
        }),
    ))
    .await
}

/// The instances in order: each attempt goes to the first one the call has not tried.
pub(crate) struct InOrder(pub(crate) Vec<(&'static str, String)>);

impl Resolver for InOrder {
    fn choose(&self, request: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        let (id, url) = self
            .0
            .iter()
            .find(|(id, _)| !request.tried.iter().any(|tried| &**tried == *id))
            .unwrap_or(&self.0[0]);
        Ok(Chosen::new(url.as_str(), *id))
    }
}

/// Slow instances first, then a fast one.
struct Fleet {
    servers: Vec<Server>,
}

impl Fleet {
    async fn start(slow: usize) -> Fleet {
        let mut servers = Vec::new();
        for _ in 0..slow {
            servers.push(server("slow", SLOW).await);
        }
        servers.push(server("fast", Duration::ZERO).await);
        Fleet { servers }
    }

    fn resolver(&self) -> InOrder {
        const IDS: [&str; 4] = ["a", "b", "c", "d"];
        InOrder(
            IDS.iter()
                .copied()
                .zip(self.servers.iter().map(Server::url))
                .collect(),
        )
    }

    fn fast(&self) -> &Server {
        self.servers.last().unwrap()
    }
}

pub(crate) fn config(yaml: &str) -> Config {
    let dir = TempDir::new("hedging");
    Config::from_file(dir.write("application.yml", yaml)).unwrap()
}

/// A client of `fleet` configured from `config` alone.
fn configured(fleet: &Fleet, config: &Config) -> OrdersClient {
    OrdersClient::builder()
        .load_balancer(fleet.resolver())
        .config(config)
        .unwrap()
        .build()
        .unwrap()
}

/// One call: the fast instance answered it, well before the slow one could have.
async fn assert_hedged(client: &OrdersClient) {
    let started = Instant::now();
    let answer = client.order().await.unwrap();
    let took = started.elapsed();
    assert_eq!(answer, "fast");
    assert!(took < SLOW / 2, "took {took:?}");
}

/// One call: the slow instance answered it, and nothing else was tried.
async fn assert_not_hedged(client: &OrdersClient) {
    let started = Instant::now();
    let answer = client.order().await.unwrap();
    let took = started.elapsed();
    assert_eq!(answer, "slow");
    assert!(took >= SLOW, "took {took:?}");
}

#[tokio::test]
async fn hedging_from_the_file_sends_a_hedge_after_its_delay() {
    let fleet = Fleet::start(1).await;
    let config = config(
        "spring.cloud.openfeign.client.config:\n  order-service:\n    hedging:\n      enabled: true\n      delay: 50ms\n",
    );
    assert_hedged(&configured(&fleet, &config)).await;
    assert_eq!(fleet.fast().request_count(), 1);
}

#[tokio::test]
async fn max_hedges_from_the_default_section_reaches_a_third_instance() {
    let fleet = Fleet::start(2).await;
    let config = config(
        "spring.cloud.openfeign.client.config:\n  default:\n    hedging.max-hedges: 2\n  order-service:\n    hedging.enabled: true\n    hedging.delay: 40\n",
    );
    assert_hedged(&configured(&fleet, &config)).await;
}

#[tokio::test]
async fn the_file_turns_off_hedging_set_in_code_and_tunes_it_without_enabled() {
    let fleet = Fleet::start(1).await;
    let in_code = |delay: Duration| {
        OrdersClient::builder()
            .load_balancer(fleet.resolver())
            .hedging(HedgingConfig::after(delay))
    };

    let off = config("feign.client.config.order-service.hedging.enabled: false\n");
    let client = in_code(Duration::from_millis(30))
        .config(&off)
        .unwrap()
        .build()
        .unwrap();
    assert_not_hedged(&client).await;

    // Without `enabled`, the delay changes the hedging set in code...
    let sooner = config("feign.client.config.default.hedging.delay: 30ms\n");
    let client = in_code(Duration::from_secs(5))
        .config(&sooner)
        .unwrap()
        .build()
        .unwrap();
    assert_hedged(&client).await;

    // ...and does not turn hedging on where the code did not.
    assert_not_hedged(&configured(&fleet, &sooner)).await;
}

#[test]
fn wrong_hedging_keys_and_values_are_errors_naming_the_key() {
    for (text, key, reason) in [
        (
            "spring.cloud.openfeign.client.config.order-service.hedging.enabled: true\n",
            "spring.cloud.openfeign.client.config.order-service.hedging.enabled",
            "hedging needs a delay",
        ),
        (
            "spring.cloud.openfeign.client.config.order-service.hedging.delay: soon\n",
            "spring.cloud.openfeign.client.config.order-service.hedging.delay",
            "expected a duration",
        ),
        (
            "spring.cloud.openfeign.client.config.order-service.hedging.delay: 0\n",
            "spring.cloud.openfeign.client.config.order-service.hedging.delay",
            "greater than zero",
        ),
        (
            "spring.cloud.openfeign.client.config.default.hedging.max-hedges: 0\n",
            "spring.cloud.openfeign.client.config.default.hedging.max-hedges",
            "expected 1 to 10 hedges per call",
        ),
        (
            "feign.client.config.order-service.hedging.dealy: 10ms\n",
            "feign.client.config.order-service.hedging.dealy",
            "unknown property",
        ),
        (
            "feign.client.config.order-service.hedging.percentile: 1.5\n",
            "feign.client.config.order-service.hedging.percentile",
            "expected a percentile between 0 and 1",
        ),
        (
            "feign.client.config.order-service.hedging.percentile: p100\n",
            "feign.client.config.order-service.hedging.percentile",
            "expected a percentile between 0 and 1",
        ),
        (
            "feign.client.config.order-service.hedging.min-delay: soon\n",
            "feign.client.config.order-service.hedging.min-delay",
            "expected a duration",
        ),
        // Another client's section is checked too.
        (
            "feign.client.config.billing.hedging.enabled: perhaps\n",
            "feign.client.config.billing.hedging.enabled",
            "expected true or false",
        ),
    ] {
        let config = Config::from_yaml_str(text, "application.yml").unwrap();
        let message = OrdersClient::builder()
            .config(&config)
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with(&format!("`{key}` in application.yml: ")),
            "{message}"
        );
        assert!(message.contains(reason), "{message}");
    }
}
