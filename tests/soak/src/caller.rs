//! The callers: for each service, a `#[feign_client]` resolved through its own Eureka discovery
//! client and feign-lb balancer, configured by [`crate::settings`].

use std::time::{Duration, Instant};

use feign_core::{feign_client, Error, ReqwestClient};
use feign_eureka::EurekaClient;
use feign_lb::LoadBalancer;

use crate::instance::{Item, NewOrder};
use crate::settings;

/// Declares the API every service serves, as a client of the service named `$service`.
macro_rules! service_api {
    ($api:ident, $service:tt) => {
        /// The API of one service, resolved by name through Eureka.
        #[feign_client($service)]
        #[headers("Accept: application/json")]
        pub(crate) trait $api {
            /// An item, answered by any instance.
            #[get("/items/{id}")]
            async fn item(&self, #[path] id: u64) -> Result<Item, Error>;

            /// Places an order; `key` ([`crate::instance::CALL_KEY`]) names the call.
            #[post("/orders")]
            async fn order(
                &self,
                #[body] order: &NewOrder,
                #[header("X-Call-Key")] key: &str,
            ) -> Result<Item, Error>;
        }
    };
}

service_api!(Alpha, "alpha");
service_api!(Beta, "beta");

/// The services of the soak, in the order the fleet and the reports list them.
pub(crate) const SERVICES: [&str; 2] = ["alpha", "beta"];

enum Api {
    Alpha(AlphaClient),
    Beta(BetaClient),
}

/// A caller of one service.
pub(crate) struct Caller {
    discovery: EurekaClient,
    balancer: LoadBalancer,
    api: Api,
}

impl Caller {
    /// Builds the caller of `SERVICES[service]`, discovering through the registries at `urls`.
    pub(crate) async fn start(
        service: usize,
        urls: &[String],
        seed: u64,
    ) -> Result<Caller, Box<dyn std::error::Error + Send + Sync>> {
        let discovery = EurekaClient::builder()
            .service_urls(urls)
            .registry_fetch_interval(settings::FETCH_INTERVAL)
            .connect_timeout(settings::EUREKA_CONNECT_TIMEOUT)
            .read_timeout(settings::EUREKA_READ_TIMEOUT)
            .seed(seed)
            .start()
            .await?;
        let balancer = LoadBalancer::builder()
            .supplier(discovery.supplier())
            .policy(settings::POLICY)
            .retry(settings::retry())
            .ejection(settings::ejection())
            .seed(seed)
            .build();
        let http = feign_core::reqwest_builder(settings::CONNECT_TIMEOUT, None, None)
            .pool_idle_timeout(settings::POOL_IDLE)
            .build()
            .map_err(Error::transport)?;
        let api = match service {
            0 => Api::Alpha(
                AlphaClient::builder()
                    .load_balancer(balancer.clone())
                    .client(ReqwestClient::from_reqwest(http))
                    .options(settings::options())
                    .build()?,
            ),
            _ => Api::Beta(
                BetaClient::builder()
                    .load_balancer(balancer.clone())
                    .client(ReqwestClient::from_reqwest(http))
                    .options(settings::options())
                    .build()?,
            ),
        };
        Ok(Caller {
            discovery,
            balancer,
            api,
        })
    }

    /// Waits until discovery lists `count` instances of the service (at most `limit`).
    pub(crate) async fn await_instances(
        &self,
        service: &str,
        count: usize,
        limit: Duration,
    ) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.discovery.instances(service).map_or(0, |i| i.len()) >= count {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    /// `GET /items/{id}`.
    pub(crate) async fn item(&self, id: u64) -> Result<Item, Error> {
        match &self.api {
            Api::Alpha(client) => client.item(id).await,
            Api::Beta(client) => client.item(id).await,
        }
    }

    /// `POST /orders` with `key`.
    pub(crate) async fn order(&self, key: &str) -> Result<Item, Error> {
        let order = NewOrder {
            item: format!("order-{key}"),
        };
        match &self.api {
            Api::Alpha(client) => client.order(&order, key).await,
            Api::Beta(client) => client.order(&order, key).await,
        }
    }

    /// The balancer's retry and ejection counters, one line.
    pub(crate) fn counters(&self, service: &str) -> String {
        match self.balancer.counters(service) {
            Some(counters) => format!("{counters:?}"),
            None => "no counters".to_owned(),
        }
    }

    /// Stops discovery.
    pub(crate) async fn shutdown(&self) {
        self.discovery.shutdown().await;
    }
}
