//! `LoadBalancer`: the [`feign_core::resolve::Resolver`] of clients declared with a service name.

#[cfg(feature = "config")]
mod live;
#[cfg(feature = "config")]
mod properties;
mod settings;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use feign_core::resolve::{ChooseRequest, Chosen, Resolver};
use feign_core::retry::RetryPolicy;
use feign_core::Error;

use crate::clock::Clock;
use crate::config::{Ejection, PeakEwma, Policy, SlowStart};
use crate::filter::{Canary, Hints, StickySession, VersionRouting, ZonePreference};
use crate::lifecycle::{Counters, LifecycleHook};
use crate::service::{ServiceLb, Settings};
use crate::table::ServiceTable;
use crate::{InstanceSupplier, RetryConfig, ServiceInstance, Subset, SubsetSupplier};

#[cfg(feature = "config")]
pub use live::LiveLoadBalancer;

/// Client-side load balancer over instance suppliers: one lock-free, allocation-free pick per
/// attempt, passive ejection, slow start, and retries across instances under a budget.
///
/// Cheap to clone; clones share all state. Hand it to a client builder's `.load_balancer(lb)`.
#[derive(Clone)]
pub struct LoadBalancer {
    inner: Arc<Inner>,
}

struct Inner {
    defaults: Settings,
    overrides: Vec<(String, ServiceConfig)>,
    clock: Clock,
    services: ServiceTable,
    _shutdown: tokio::sync::watch::Sender<()>,
}

/// One instance's state as the balancer sees it now.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct InstanceState {
    /// The instance.
    pub instance: ServiceInstance,
    /// Attempts in flight to it.
    pub in_flight: u32,
    /// Whether passive ejection holds it out now.
    pub ejected: bool,
    /// Its Peak-EWMA latency estimate now. Kept under [`Policy::PeakEwma`] only, the policy
    /// that reads it: under the others it stays at [`PeakEwma::default_rtt`].
    pub latency_estimate: Duration,
}

impl LoadBalancer {
    /// Starts a builder with Spring Cloud LoadBalancer's defaults (round robin, one retry on the
    /// next instance) plus passive ejection, slow start and a retry budget.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The balancer of service `name`, created on first use.
    fn service(&self, name: &str) -> &Arc<ServiceLb> {
        let inner = &self.inner;
        inner.services.get_or_add(name, || {
            ServiceLb::new(name, inner.settings_for(name), inner.clock, None)
        })
    }

    /// The counters of `service`, if it has been used.
    pub fn counters(&self, service: &str) -> Option<Counters> {
        self.inner
            .services
            .get(service)
            .map(|s| s.state.counters.read(s.in_flight()))
    }

    /// The instances of `service` with their live state (refreshing the list first).
    pub fn instance_states(&self, service: &str) -> Vec<InstanceState> {
        let lb = self.service(service);
        lb.refresh();
        let snap = lb.snapshot.load();
        let now = lb.state.clock.now();
        snap.stats
            .iter()
            .zip(snap.instances.iter())
            .map(|(s, instance)| InstanceState {
                instance: instance.clone(),
                in_flight: s.in_flight(),
                ejected: s.ejection_pending(now),
                latency_estimate: Duration::from_nanos(
                    s.latency_estimate(now, lb.state.decay_ns) as u64
                ),
            })
            .collect()
    }
}

impl Inner {
    fn settings_for(&self, name: &str) -> Settings {
        let mut settings = self.defaults.clone();
        settings.seed = settings.seed.map(|seed| seed ^ fnv(name));
        if let Some((_, config)) = self
            .overrides
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            config.apply(&mut settings);
        }
        settings
    }
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x100_0000_01b3)
    })
}

impl Resolver for LoadBalancer {
    fn choose(&self, request: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        // Borrowed from the table, which only grows: no lock, no reference count moves.
        self.service(request.call.service).choose(request)
    }

    fn retry_policy(&self, service: &str) -> Option<Arc<dyn RetryPolicy>> {
        let policy: Arc<dyn RetryPolicy> = self.service(service).retry.clone();
        Some(policy)
    }
}

impl fmt::Debug for LoadBalancer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.inner.services.iter().map(|s| &*s.state.name).collect();
        f.debug_struct("LoadBalancer")
            .field("policy", &self.inner.defaults.policy)
            .field("services", &names)
            .finish_non_exhaustive()
    }
}

/// Settings of one service that differ from the balancer's, as Spring's
/// `@LoadBalancerClient(name = ..., configuration = ...)`: each setter here is also a setter of
/// [`Builder`], where it sets the default of every service.
#[derive(Clone, Default)]
#[must_use]
pub struct ServiceConfig {
    supplier: Option<Arc<dyn InstanceSupplier>>,
    policy: Option<Policy>,
    retry: Option<RetryConfig>,
    zone: Option<Option<ZonePreference>>,
    hints: Option<Option<Hints>>,
    canary: Option<Option<Canary>>,
    version: Option<Option<VersionRouting>>,
    sticky: Option<Option<StickySession>>,
    same_instance: Option<bool>,
    ejection: Option<Ejection>,
    slow_start: Option<SlowStart>,
    peak_ewma: Option<PeakEwma>,
    panic_threshold: Option<f64>,
}

impl fmt::Debug for ServiceConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceConfig")
            .field("policy", &self.policy)
            .field("retry", &self.retry)
            .field("has_supplier", &self.supplier.is_some())
            .finish_non_exhaustive()
    }
}

impl ServiceConfig {
    /// Settings that inherit everything from the balancer.
    pub fn new() -> Self {
        ServiceConfig::default()
    }

    fn apply(&self, s: &mut Settings) {
        if let Some(supplier) = &self.supplier {
            s.supplier = Some(supplier.clone());
        }
        if let Some(p) = self.policy {
            s.policy = p;
        }
        if let Some(r) = &self.retry {
            s.retry = r.clone();
        }
        if let Some(z) = &self.zone {
            s.filters.zone = z.clone();
        }
        if let Some(h) = &self.hints {
            s.filters.hints = h.clone();
        }
        if let Some(c) = &self.canary {
            s.filters.canary = c.clone();
        }
        if let Some(v) = &self.version {
            s.filters.version = v.clone();
        }
        if let Some(st) = &self.sticky {
            s.filters.sticky = st.clone();
        }
        if let Some(same) = self.same_instance {
            s.filters.same_instance = same;
        }
        if let Some(e) = &self.ejection {
            s.ejection = e.clone();
        }
        if let Some(ss) = &self.slow_start {
            s.slow_start = ss.clone();
        }
        if let Some(pe) = &self.peak_ewma {
            s.peak_ewma = pe.clone();
        }
        if let Some(t) = self.panic_threshold {
            s.panic_threshold = t;
        }
    }
}

fn clamp_share(share: f64, default: f64) -> f64 {
    if share.is_nan() {
        default
    } else {
        share.clamp(0.0, 1.0)
    }
}

/// Builds a [`LoadBalancer`]. Every setting has a safe default; out-of-range values are
/// clamped, as each setter says. The per-service setters (`policy`, `retry`, `slow_start`, ...)
/// are [`ServiceConfig`]'s: here they set the default of every service, and
/// [`Builder::service`] gives one service settings of its own.
#[must_use]
#[derive(Clone)]
pub struct Builder {
    /// The settings of every service; unset ones keep the built-in defaults.
    defaults: ServiceConfig,
    seed: Option<u64>,
    overrides: Vec<(String, ServiceConfig)>,
    hooks: Vec<Arc<dyn LifecycleHook>>,
    /// This client's subset of every service, put around the suppliers by `build`.
    subset: Option<Subset>,
    /// Caches and health checks from configuration, put around the suppliers by `build`.
    #[cfg(feature = "config")]
    layers: properties::Layers,
    /// The transport settings the health checks from configuration connect with.
    #[cfg(feature = "config")]
    health_check_transport: Option<(feign_core::transport::HttpClientConfig, feign_core::Options)>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            defaults: ServiceConfig::new(),
            seed: None,
            overrides: Vec::new(),
            hooks: Vec::new(),
            subset: None,
            #[cfg(feature = "config")]
            layers: properties::Layers::default(),
            #[cfg(feature = "config")]
            health_check_transport: None,
        }
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("policy", &self.defaults.policy.unwrap_or_default())
            .finish_non_exhaustive()
    }
}

impl Builder {
    /// The settings every service starts from: the built-in defaults under those set.
    fn settings(&self) -> Settings {
        let mut settings = Settings::default();
        self.defaults.apply(&mut settings);
        settings.seed = self.seed;
        settings
    }

    /// Settings for one service that differ from the others (case-insensitive name).
    pub fn service(mut self, name: impl Into<String>, config: ServiceConfig) -> Self {
        self.overrides.push((name.into(), config));
        self
    }

    /// Adds a lifecycle hook.
    pub fn lifecycle(mut self, hook: impl LifecycleHook) -> Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// Seeds every random choice (start positions, random and two-choice picks, canary
    /// draws, jitter), for deterministic tests. Default: a random seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Deterministic subsetting (Spring Cloud LoadBalancer's `subset` configuration; default
    /// off): this client talks only to its [`Subset`] of each service, `size` instances (100 by
    /// default) chosen by its instance id, so that a service of thousands of instances is not
    /// called, and kept connected, by every client. Clients with different ids spread evenly
    /// over the instances, and an instance that comes or goes moves only the clients whose
    /// subset it enters or leaves (see [`Subset`]). Applies to every supplier of the balancer,
    /// before caches and health checks.
    ///
    /// ```
    /// use feign_lb::{LoadBalancer, StaticSupplier, Subset};
    ///
    /// let urls: Vec<String> = (1..=300).map(|i| format!("http://10.0.{}.{}:8080", i / 250, i % 250)).collect();
    /// let lb = LoadBalancer::builder()
    ///     .supplier(StaticSupplier::new("orders", &urls))
    ///     .subset(Subset::new("billing-7f9c").size(10))
    ///     .build();
    /// # let _ = lb;
    /// ```
    pub fn subset(mut self, subset: Subset) -> Self {
        self.subset = Some(subset);
        self
    }

    /// The TLS, proxy and pool settings and the options (connect timeout) of the balanced
    /// clients, for the health checks that configuration puts around the suppliers
    /// (`configurations: health-check`): so that instances behind a private CA, mutual TLS or
    /// a proxy are checked as they are called (see [`HealthCheckOptions::transport`], the same
    /// for a [`HealthCheckSupplier`] built in code). Default: feign-rs's reqwest defaults.
    ///
    /// [`HealthCheckOptions::transport`]: crate::HealthCheckOptions::transport
    /// [`HealthCheckSupplier`]: crate::HealthCheckSupplier
    #[cfg(feature = "config")]
    pub fn health_check_transport(
        mut self,
        http: feign_core::transport::HttpClientConfig,
        options: &feign_core::Options,
    ) -> Self {
        self.health_check_transport = Some((http, *options));
        self
    }

    /// Builds the balancer. Inside a tokio runtime it also listens to each supplier's
    /// [`InstanceSupplier::changed`], so lists are rebuilt as soon as they change; outside one,
    /// picks still notice a moved [`InstanceSupplier::version`] themselves.
    pub fn build(self) -> LoadBalancer {
        self.build_replacing(None)
    }

    /// [`Builder::build`]; with `replaced`, a balancer to take the place of (a live reload):
    /// the new one keeps its clock and, for every service it knew, takes over its instances'
    /// ejections, latency estimates and slow-start ramps.
    fn build_replacing(mut self, replaced: Option<&LoadBalancer>) -> LoadBalancer {
        if let Some(subset) = self.subset.take() {
            let narrow = |supplier: &mut Option<Arc<dyn InstanceSupplier>>| {
                if let Some(inner) = supplier.take() {
                    *supplier = Some(Arc::new(SubsetSupplier::shared(inner, subset.clone())));
                }
            };
            narrow(&mut self.defaults.supplier);
            for (_, config) in &mut self.overrides {
                narrow(&mut config.supplier);
            }
        }
        #[cfg(feature = "config")]
        properties::wrap_suppliers(&mut self);
        let defaults = Settings {
            hooks: Arc::from(std::mem::take(&mut self.hooks)),
            ..self.settings()
        };
        let (shutdown, _) = tokio::sync::watch::channel(());
        let clock = replaced.map_or_else(Clock::new, |r| r.inner.clock);
        let lb = LoadBalancer {
            inner: Arc::new(Inner {
                defaults,
                overrides: self.overrides,
                clock,
                services: ServiceTable::new(),
                _shutdown: shutdown,
            }),
        };
        for service in replaced.iter().flat_map(|r| r.inner.services.iter()) {
            let (name, snapshot) = (&*service.state.name, service.snapshot.load());
            lb.inner.services.get_or_add(name, || {
                ServiceLb::new(name, lb.inner.settings_for(name), clock, Some(&snapshot))
            });
        }
        let names: Vec<String> = lb.inner.overrides.iter().map(|(n, _)| n.clone()).collect();
        for name in &names {
            lb.service(name);
        }
        lb.listen();
        lb
    }

    /// Balancer of `services` from one static list each, for tests and fixed topologies.
    ///
    /// # Panics
    ///
    /// If a URL cannot be used, as [`StaticSupplier::new`](crate::StaticSupplier::new) does.
    pub fn static_lists<'a>(
        self,
        services: impl IntoIterator<Item = (&'a str, Vec<&'a str>)>,
    ) -> Self {
        let mut supplier = crate::StaticSupplier::empty();
        for (name, urls) in services {
            supplier = supplier.with_service(name, urls);
        }
        self.supplier(supplier)
    }
}

impl LoadBalancer {
    fn listen(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut suppliers: Vec<Arc<dyn InstanceSupplier>> = Vec::new();
        let mut add = |s: &Arc<dyn InstanceSupplier>| {
            if !suppliers.iter().any(|known| Arc::ptr_eq(known, s)) {
                suppliers.push(s.clone());
            }
        };
        if let Some(s) = &self.inner.defaults.supplier {
            add(s);
        }
        for (_, config) in &self.inner.overrides {
            if let Some(s) = &config.supplier {
                add(s);
            }
        }
        for supplier in suppliers {
            let weak = Arc::downgrade(&self.inner);
            let mut shutdown = self.inner._shutdown.subscribe();
            runtime.spawn(async move {
                loop {
                    let seen = supplier.version();
                    tokio::select! {
                        _ = supplier.changed(seen) => {}
                        _ = shutdown.changed() => return,
                    }
                    let Some(inner) = weak.upgrade() else { return };
                    for service in inner.services.iter() {
                        if service
                            .supplier()
                            .is_some_and(|s| Arc::ptr_eq(s, &supplier))
                        {
                            service.refresh();
                        }
                    }
                }
            });
        }
    }
}
