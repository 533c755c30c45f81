//! The Eureka client: registration, heartbeats, registry fetching, and the feign-lb supplier.

mod backoff;
mod backup;
mod builder;
mod cache;
mod discovery;
mod endpoint;
mod error;
mod health;
mod instance_config;
mod limiter;
mod registration;
mod registry;
mod routing;
mod shared;
mod supplier;
mod throttle;
mod transport;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use feign_lb::Instances;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::model::{Applications, InstanceStatus};

pub use backup::BackupRegistry;
pub use builder::EurekaClientBuilder;
pub use cache::RegistryCache;
pub use error::Error;
pub use health::HealthCheck;
pub use instance_config::InstanceConfig;
pub use supplier::EurekaSupplier;

use discovery::Discovery;
use error::Chain;
use health::HealthPoll;
use registration::Registration;
use shared::Shared;
use transport::Transport;

/// What the background tasks share.
struct Context {
    transport: Transport,
    registration: Option<Registration>,
    discovery: Option<Discovery>,
    health: Option<HealthPoll>,
}

struct Tasks {
    registration: Option<JoinHandle<()>>,
    discovery: Option<JoinHandle<()>>,
    health: Option<JoinHandle<()>>,
}

struct Inner {
    shared: Arc<Shared>,
    context: Arc<Context>,
    stop: watch::Sender<bool>,
    tasks: Mutex<Tasks>,
    shut_down: AtomicBool,
    shutdown_timeout: Duration,
}

impl Drop for Inner {
    /// Dropping the last handle stops the background tasks at once (without deregistering:
    /// that needs [`EurekaClient::shutdown`]). Never blocks, never panics, also after the
    /// runtime is gone.
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        let tasks = self.tasks.get_mut().unwrap_or_else(|e| e.into_inner());
        for task in [
            tasks.health.take(),
            tasks.registration.take(),
            tasks.discovery.take(),
        ]
        .into_iter()
        .flatten()
        {
            task.abort();
        }
    }
}

/// A running Eureka client. Cheap to clone; every clone is the same client.
///
/// Created by [`EurekaClient::builder`]. It registers the configured instance (after a small
/// random delay), renews its lease every renewal interval, re-registers at once when Eureka
/// answers a heartbeat with 404 or when [`set_status`](EurekaClient::set_status), the
/// [health check](EurekaClientBuilder::health_check) or
/// [`set_metadata`](EurekaClient::set_metadata) changes what it registers, and keeps a local copy of the registry fresh with deltas. When Eureka is down it
/// keeps serving the cached instances; [`staleness`](EurekaClient::staleness) says for how
/// long. Call [`shutdown`](EurekaClient::shutdown) to deregister; dropping every handle only
/// stops the background tasks.
#[derive(Clone)]
pub struct EurekaClient {
    inner: Arc<Inner>,
}

impl fmt::Debug for EurekaClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EurekaClient")
            .field("instance_id", &self.instance_id())
            .field("registry_version", &self.inner.shared.version())
            .finish_non_exhaustive()
    }
}

impl EurekaClient {
    /// A builder with Eureka's defaults.
    pub fn builder() -> EurekaClientBuilder {
        EurekaClientBuilder::default()
    }

    async fn start(builder: EurekaClientBuilder) -> Result<EurekaClient, Error> {
        if let Some(error) = builder.deferred {
            return Err(error);
        }
        if !builder.enabled {
            return Err(Error::Disabled);
        }
        if builder.instance.is_none() && !builder.fetch_registry {
            return Err(Error::NothingToDo);
        }
        if let Some(instance) = &builder.instance {
            instance.validate()?;
        }
        let endpoints = builder.endpoints()?;
        let transport = Transport::new(endpoints, builder.transport_config())?;
        let shared = Shared::new(builder.policy);
        let discovery = builder
            .fetch_registry
            .then(|| Discovery::new(shared.clone(), builder.discovery_config()));
        let health = builder
            .health_poll()?
            .filter(|_| builder.instance.is_some());
        let settings = builder.registration_settings();
        let registration = builder
            .instance
            .clone()
            .map(|instance| Registration::new(instance, settings));
        let context = Arc::new(Context {
            transport,
            registration,
            discovery,
            health,
        });

        // With no jitter to wait for (`development()`), the instance registers before the first
        // fetch, so that fetch lists it and a call to it works once `start` returns. A failure
        // is logged and left to the registration loop, which retries.
        if let Some(registration) = context
            .registration
            .as_ref()
            .filter(|_| builder.registration_jitter.is_zero())
        {
            registration.register(&context.transport).await;
        }
        if let Some(discovery) = &context.discovery {
            if let Err(e) = discovery.fetch(&context.transport).await {
                let backup = builder
                    .backup
                    .as_ref()
                    .map(|b| b.load(builder.max_registry_bytes));
                match backup {
                    Some(Ok(listing)) => {
                        let count = discovery.serve_backup(listing);
                        tracing::warn!(target: "feign_eureka", error = %Chain(&e), instances = count, "initial registry fetch failed; serving the backup registry until a fetch succeeds");
                    }
                    Some(Err(_)) | None if builder.enforce_fetch_at_init => {
                        return Err(Error::InitialFetch(Box::new(e)));
                    }
                    Some(Err(backup_error)) => {
                        tracing::warn!(target: "feign_eureka", error = %Chain(&e), backup_error = %Chain(&backup_error), "initial registry fetch failed and the backup registry did not load; starting with an empty registry");
                    }
                    None => {
                        tracing::warn!(target: "feign_eureka", error = %Chain(&e), "initial registry fetch failed; starting with an empty registry");
                    }
                }
            }
        }

        let (stop, _) = watch::channel(false);
        let registration_task = context.registration.is_some().then(|| {
            let context = context.clone();
            let stop = stop.subscribe();
            let (jitter, bound) = (builder.registration_jitter, builder.backoff_bound);
            tokio::spawn(async move {
                if let Some(registration) = &context.registration {
                    registration
                        .run(&context.transport, jitter, bound, stop)
                        .await;
                }
            })
        });
        let health_task = context.health.is_some().then(|| {
            let context = context.clone();
            let stop = stop.subscribe();
            tokio::spawn(async move {
                if let (Some(health), Some(registration)) = (&context.health, &context.registration)
                {
                    health.run(registration, stop).await;
                }
            })
        });
        let discovery_task = context.discovery.is_some().then(|| {
            let context = context.clone();
            let stop = stop.subscribe();
            tokio::spawn(async move {
                if let Some(discovery) = &context.discovery {
                    discovery.run(&context.transport, stop).await;
                }
            })
        });
        let inner = Inner {
            shared,
            context,
            stop,
            tasks: Mutex::new(Tasks {
                registration: registration_task,
                discovery: discovery_task,
                health: health_task,
            }),
            shut_down: AtomicBool::new(false),
            shutdown_timeout: builder.shutdown_timeout,
        };
        Ok(EurekaClient {
            inner: Arc::new(inner),
        })
    }

    /// The registry as a feign-lb instance supplier (routable `UP` instances only).
    pub fn supplier(&self) -> EurekaSupplier {
        EurekaSupplier::new(self.inner.shared.clone())
    }

    /// The routable instances of `service` (application name or VIP, any case), as the
    /// supplier returns them; `None` when the registry does not know the service.
    pub fn instances(&self, service: &str) -> Option<Instances> {
        self.inner.shared.snapshot().lookup(service)
    }

    /// A copy of the whole local registry, every status included.
    pub fn applications(&self) -> Applications {
        self.inner.shared.snapshot().to_applications()
    }

    /// The number of instances in the local registry, every status included.
    pub fn instance_count(&self) -> usize {
        self.inner.shared.snapshot().instance_count()
    }

    /// The reconcile hash of the local registry (compare with the server's `apps__hashcode`).
    pub fn registry_hash_code(&self) -> String {
        self.inner.shared.snapshot().hash_code()
    }

    /// How long ago the registry was last fetched successfully; `None` if it never was.
    ///
    /// The same figure is published as the gauge `eureka.client.registry.staleness` (seconds)
    /// through the `metrics` facade after every fetch attempt, failed ones included, and on
    /// every call of this method: call it from a metrics scrape to read it up to date.
    pub fn staleness(&self) -> Option<Duration> {
        self.inner.shared.staleness()
    }

    /// The registered instance id, if this client registers.
    pub fn instance_id(&self) -> Option<&str> {
        self.inner
            .context
            .registration
            .as_ref()
            .map(Registration::id)
    }

    /// The status this client reports for itself, if it registers.
    pub fn status(&self) -> Option<InstanceStatus> {
        self.inner
            .context
            .registration
            .as_ref()
            .map(Registration::status)
    }

    /// Whether the last registration attempt was accepted and no heartbeat has since been
    /// answered with 404.
    pub fn is_registered(&self) -> bool {
        self.inner
            .context
            .registration
            .as_ref()
            .is_some_and(Registration::is_registered)
    }

    /// This instance's status as the fetched registry shows it (an administrator's
    /// `OUT_OF_SERVICE` override shows here); `None` if it is not in the local registry.
    pub fn remote_status(&self) -> Option<InstanceStatus> {
        let registration = self.inner.context.registration.as_ref()?;
        self.inner
            .shared
            .snapshot()
            .status_of(registration.app(), registration.id())
    }

    /// Reports a new status (`STARTING`, `UP`, `DOWN`, `OUT_OF_SERVICE`) by re-registering with
    /// a newer `lastDirtyTimestamp`, at once within the on-demand rate limit (2 at once, then
    /// one per 15 s for the default
    /// [replication interval](EurekaClientBuilder::instance_info_replication_interval)); a
    /// change the limit holds back goes out with the next token or heartbeat, whichever comes
    /// first. An administrator's override on the server still wins, and a
    /// [health check](EurekaClientBuilder::health_check) overrides this at its next answer.
    /// Does nothing when this client does not register.
    pub fn set_status(&self, status: InstanceStatus) {
        if let Some(registration) = &self.inner.context.registration {
            registration.set_status(status);
        }
    }

    /// The metadata this client registers now: the configured map with the changes made at
    /// run time; `None` if it does not register.
    pub fn metadata(&self) -> Option<BTreeMap<String, String>> {
        self.inner
            .context
            .registration
            .as_ref()
            .map(Registration::metadata)
    }

    /// Sets a metadata entry at run time (a new `version`, `weight`, ...) and sends it promptly:
    /// a re-registration within the on-demand rate limit of Netflix's `InstanceInfoReplicator`
    /// (2 at once, then one per 15 s for the default
    /// [replication interval](EurekaClientBuilder::instance_info_replication_interval)). Changes
    /// the limit holds back are sent together as soon as it allows (or with the next heartbeat,
    /// if sooner), so the latest metadata always arrives. Setting a value it already has sends
    /// nothing. Does nothing when this client does not register.
    ///
    /// The key `@class` is reserved by Eureka's wire format: [`Error::InvalidInstance`].
    pub fn set_metadata(
        &self,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Result<(), Error> {
        let (key, value) = (key.into(), value.into());
        self.update_metadata([(key, value)])
    }

    /// Removes a metadata entry at run time, sent as [`set_metadata`](EurekaClient::set_metadata)
    /// sends a change (nothing is sent when there was no such entry).
    pub fn remove_metadata(&self, key: &str) {
        if let Some(registration) = &self.inner.context.registration {
            registration.change_metadata(|metadata| {
                metadata.remove(key);
            });
        }
    }

    /// Sets several metadata entries at run time as one change (one re-registration), sent as
    /// [`set_metadata`](EurekaClient::set_metadata) sends one. Entries not named are kept.
    pub fn update_metadata<I, K, V>(&self, entries: I) -> Result<(), Error>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let entries: Vec<(String, String)> = entries
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        if entries.iter().any(|(key, _)| key == "@class") {
            return Err(Error::InvalidInstance(
                "metadata key `@class` is reserved".to_owned(),
            ));
        }
        if let Some(registration) = &self.inner.context.registration {
            registration.change_metadata(|metadata| metadata.extend(entries));
        }
        Ok(())
    }

    /// Fetches the registry now (a delta when possible) instead of waiting for the next
    /// scheduled fetch.
    pub async fn refresh(&self) -> Result<(), Error> {
        match &self.inner.context.discovery {
            Some(discovery) => discovery
                .fetch(&self.inner.context.transport)
                .await
                .map_err(|e| Error::Fetch(Box::new(e))),
            None => Ok(()),
        }
    }

    /// Stops heartbeats, deregisters (`DELETE apps/{APP}/{ID}`, once, bounded by the shutdown
    /// timeout even when Eureka hangs), then stops registry fetching. Later calls do nothing.
    /// The supplier keeps serving the last registry.
    pub async fn shutdown(&self) {
        if self.inner.shut_down.swap(true, Ordering::AcqRel) {
            return;
        }
        let _ = self.inner.stop.send(true);
        let (health_task, registration_task, discovery_task) = {
            let mut tasks = self.inner.tasks.lock().unwrap_or_else(|e| e.into_inner());
            (
                tasks.health.take(),
                tasks.registration.take(),
                tasks.discovery.take(),
            )
        };
        if let Some(task) = health_task {
            task.abort();
            let _ = task.await;
        }
        if let Some(task) = registration_task {
            task.abort();
            let _ = task.await;
        }
        if let Some(registration) = &self.inner.context.registration {
            registration
                .deregister(&self.inner.context.transport, self.inner.shutdown_timeout)
                .await;
        }
        if let Some(task) = discovery_task {
            task.abort();
            let _ = task.await;
        }
    }
}
