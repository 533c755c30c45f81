//! The client stacks under test, assembled the way an application assembles them.

use std::error::Error as StdError;
use std::time::{Duration, Instant};

use feign_eureka::{EurekaClient, InstanceConfig};
use feign_eureka_server::EurekaServer;
use feign_lb::{InstanceSupplier, Instances, LoadBalancer, Policy, StaticSupplier};
use futures_util::future::BoxFuture;

use crate::client::{OrderServiceClient, SERVICE};

/// What setting up a stack may fail with.
pub type SetupResult<T> = Result<T, Box<dyn StdError + Send + Sync>>;

/// A feign client calling `url` directly.
pub fn feign_fixed(url: &str) -> SetupResult<OrderServiceClient> {
    Ok(OrderServiceClient::builder().url(url).build()?)
}

/// A feign client resolved through `balancer`.
pub fn feign_balanced(balancer: LoadBalancer) -> SetupResult<OrderServiceClient> {
    Ok(OrderServiceClient::builder()
        .load_balancer(balancer)
        .build()?)
}

/// A balancer over a static list of `urls` for [`SERVICE`], with default settings but `policy`.
pub fn static_balancer(urls: &[String], policy: Policy) -> LoadBalancer {
    LoadBalancer::builder()
        .supplier(StaticSupplier::new(SERVICE, urls))
        .policy(policy)
        .build()
}

/// How a discovered instance of `app` registers: its port on 127.0.0.1, named
/// `127.0.0.1:PORT`.
pub fn instance_config(app: &str, port: u16) -> InstanceConfig {
    InstanceConfig::new(app, port)
        .host_name("127.0.0.1")
        .ip_address("127.0.0.1")
        .prefer_ip_address(true)
        .instance_id(format!("127.0.0.1:{port}"))
}

/// Registers an instance of [`SERVICE`] on `port` with the registry at `eureka_url`,
/// registration only, no start-up jitter.
pub async fn register(eureka_url: &str, port: u16) -> SetupResult<EurekaClient> {
    Ok(EurekaClient::builder()
        .service_urls([eureka_url])
        .fetch_registry(false)
        .registration_jitter(Duration::ZERO)
        .instance(instance_config(SERVICE, port))
        .start()
        .await?)
}

/// A discovery-only client of the registry at `eureka_url`, fetching every `fetch_interval`.
pub async fn discovery_client(
    eureka_url: &str,
    fetch_interval: Duration,
) -> SetupResult<EurekaClient> {
    Ok(EurekaClient::builder()
        .service_urls([eureka_url])
        .registry_fetch_interval(fetch_interval)
        .allow_loopback(true)
        .start()
        .await?)
}

/// How many instances of [`SERVICE`] `client` currently knows.
pub fn known_instances(client: &EurekaClient) -> usize {
    client
        .instances(SERVICE)
        .map_or(0, |instances| instances.len())
}

/// A balancer over the instances of [`SERVICE`] that `client` discovers, with default settings
/// but `policy`.
pub fn discovered_balancer(client: &EurekaClient, policy: Policy) -> LoadBalancer {
    LoadBalancer::builder()
        .supplier(client.supplier())
        .policy(policy)
        .build()
}

/// Waits (at most 10 s) until `client` lists `count` instances of [`SERVICE`].
pub async fn await_instances(client: &EurekaClient, count: usize) -> SetupResult<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while known_instances(client) < count {
        if Instant::now() > deadline {
            return Err("the discovery client did not see every instance within 10 s".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// The embedded registry with the servers on `ports` registered.
#[derive(Debug)]
pub struct Registered {
    registry: EurekaServer,
    registrations: Vec<EurekaClient>,
}

impl Registered {
    /// Starts the registry and registers every port with it.
    pub async fn start(ports: &[u16]) -> SetupResult<Registered> {
        let registry = EurekaServer::builder()
            .bind("127.0.0.1:0")
            .read_only_cache(false)
            .start()
            .await?;
        let mut registrations = Vec::new();
        for &port in ports {
            registrations.push(register(registry.url(), port).await?);
        }
        Ok(Registered {
            registry,
            registrations,
        })
    }

    /// The registry's base URL.
    pub fn url(&self) -> &str {
        self.registry.url()
    }

    /// Deregisters everything and stops the registry.
    pub async fn shutdown(self) {
        for registration in &self.registrations {
            registration.shutdown().await;
        }
        self.registry.shutdown().await;
    }
}

/// The embedded registry with the servers on `ports` registered, and a discovery client that
/// has seen all of them.
#[derive(Debug)]
pub struct Discovered {
    registered: Registered,
    client: EurekaClient,
}

impl Discovered {
    /// Starts the registry, registers every port and waits (at most 10 s) until the discovery
    /// client lists them all.
    pub async fn start(ports: &[u16]) -> SetupResult<Discovered> {
        let registered = Registered::start(ports).await?;
        let client = discovery_client(registered.url(), Duration::from_millis(500)).await?;
        await_instances(&client, ports.len()).await?;
        Ok(Discovered { registered, client })
    }

    /// A balancer fed by the discovery client.
    pub fn balancer(&self, policy: Policy) -> LoadBalancer {
        discovered_balancer(&self.client, policy)
    }

    /// Deregisters everything and stops the registry.
    pub async fn shutdown(self) {
        self.client.shutdown().await;
        self.registered.shutdown().await;
    }
}

/// Serves the instances a supplier lists under `target` as those of [`SERVICE`], so that
/// several independent measurements can share one registry under distinct application names
/// while calling through the same client.
#[derive(Debug, Clone)]
pub struct Renamed<S> {
    inner: S,
    target: String,
}

impl<S: InstanceSupplier> Renamed<S> {
    /// Lists `inner`'s instances of `target` as [`SERVICE`].
    pub fn new(inner: S, target: impl Into<String>) -> Renamed<S> {
        Renamed {
            inner,
            target: target.into(),
        }
    }
}

impl<S: InstanceSupplier> InstanceSupplier for Renamed<S> {
    fn instances(&self, service_id: &str) -> Option<Instances> {
        if service_id.eq_ignore_ascii_case(SERVICE) {
            self.inner.instances(&self.target)
        } else {
            None
        }
    }

    fn version(&self) -> u64 {
        self.inner.version()
    }

    fn changed(&self, seen: u64) -> BoxFuture<'static, ()> {
        self.inner.changed(seen)
    }
}
