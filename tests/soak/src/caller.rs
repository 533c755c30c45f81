//! The callers: for each service, a `#[feign_client]` resolved through its own Eureka discovery
//! client (push discovery) and feign-lb balancer, hedged, behind an adaptive concurrency limit,
//! trusting the soak's CA, and following the live configuration file; configured by
//! [`crate::settings`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use feign_core::config::LiveConfig;
use feign_core::resolve::{CallInfo, ChooseRequest, Chosen, Resolver};
use feign_core::retry::{RetryContext, RetryDecision, RetryPolicy};
use feign_core::transport::Tls;
use feign_core::{feign_client, Error};
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
    hedges: Arc<Hedges>,
    api: Api,
}

/// Builds a client of one service the same way, whichever its trait.
macro_rules! client {
    ($client:ident, $resolver:expr, $ca:expr, $live:expr) => {
        $client::builder()
            .load_balancer($resolver)
            .options(settings::options())
            .hedging(settings::hedging())
            .adaptive_concurrency(settings::adaptive_limit())
            .tls(Tls::new().ca_pem($ca))
            .pool_idle_timeout(settings::POOL_IDLE)
            .live_config($live)
            .build()?
    };
}

impl Caller {
    /// Builds the caller of `SERVICES[service]`, discovering through the registries at `urls`,
    /// trusting the CA `ca` (PEM) and following `live`.
    pub(crate) async fn start(
        service: usize,
        urls: &[String],
        seed: u64,
        ca: &str,
        live: &LiveConfig,
    ) -> Result<Caller, Box<dyn std::error::Error + Send + Sync>> {
        let discovery = EurekaClient::builder()
            .service_urls(urls)
            .registry_fetch_interval(settings::FETCH_INTERVAL)
            .watch(true)
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
        let hedges = Arc::new(Hedges::default());
        let resolver = Counting {
            balancer: balancer.clone(),
            hedges: hedges.clone(),
        };
        let api = match service {
            0 => Api::Alpha(client!(AlphaClient, resolver, ca, live)),
            _ => Api::Beta(client!(BetaClient, resolver, ca, live)),
        };
        Ok(Caller {
            discovery,
            balancer,
            hedges,
            api,
        })
    }

    /// Whether discovery lists the instance `id` of `service` now.
    pub(crate) fn lists(&self, service: &str, id: &str) -> bool {
        self.discovery
            .instances(service)
            .is_some_and(|instances| instances.iter().any(|i| i.instance_id() == id))
    }

    /// Hedges sent, and hedges the hedge budget refused.
    pub(crate) fn hedges(&self) -> (u64, u64) {
        (
            self.hedges.sent.load(Ordering::Relaxed),
            self.hedges.refused.load(Ordering::Relaxed),
        )
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

/// Hedges asked of the balancer's retry policy: sent, and refused by the hedge budget.
#[derive(Debug, Default)]
struct Hedges {
    sent: AtomicU64,
    refused: AtomicU64,
}

/// The balancer as the caller's resolver, its retry policy counting the hedges it allows.
struct Counting {
    balancer: LoadBalancer,
    hedges: Arc<Hedges>,
}

impl Resolver for Counting {
    fn choose(&self, request: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        self.balancer.choose(request)
    }

    fn retry_policy(&self, service: &str) -> Option<Arc<dyn RetryPolicy>> {
        let inner = self.balancer.retry_policy(service)?;
        Some(Arc::new(CountingPolicy {
            inner,
            hedges: self.hedges.clone(),
        }))
    }
}

/// A retry policy as it is, counting the hedges it allows and refuses.
struct CountingPolicy {
    inner: Arc<dyn RetryPolicy>,
    hedges: Arc<Hedges>,
}

impl RetryPolicy for CountingPolicy {
    fn on_call(&self) {
        self.inner.on_call();
    }

    fn decide(&self, ctx: &RetryContext<'_>) -> RetryDecision {
        self.inner.decide(ctx)
    }

    fn allow_hedge(&self, call: &CallInfo<'_>) -> bool {
        let allowed = self.inner.allow_hedge(call);
        let count = match allowed {
            true => &self.hedges.sent,
            false => &self.hedges.refused,
        };
        count.fetch_add(1, Ordering::Relaxed);
        allowed
    }
}
