//! [`Builder::live_config`]: a client that follows a [`LiveConfig`] (feature `config`), as
//! Spring Cloud OpenFeign's `spring.cloud.openfeign.client.refresh-enabled` does.

use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use feign_config::{Config, ConfigError, LiveConfig};

use super::Builder;
use crate::pipeline::{Core, CoreInner, Live};
use crate::Error;

/// The switch, the older name first so that the Spring Cloud 4 name wins.
const REFRESH_ENABLED: [&str; 2] = [
    "feign.client.refresh-enabled",
    "spring.cloud.openfeign.client.refresh-enabled",
];

/// The sections of the circuit breaker, the bulkhead and the adaptive limit: while they read
/// the same, a client rebuilt on new properties keeps their state (an open breaker stays open).
const RESILIENCE: [&str; 4] = [
    "feign.circuitbreaker",
    "spring.cloud.openfeign.circuitbreaker",
    "resilience4j.circuitbreaker",
    "resilience4j.bulkhead",
];

/// The sections of the built-in transport: while they read the same, a client rebuilt on new
/// properties keeps its connections.
const TRANSPORT: [&str; 3] = [
    "feign.httpclient",
    "spring.cloud.openfeign.httpclient",
    "spring.ssl",
];

/// The client sections, whose `ssl-bundle` keys choose the transport's TLS too.
const CLIENT_SECTIONS: [&str; 2] = [
    "feign.client.config",
    "spring.cloud.openfeign.client.config",
];

impl<C> Builder<C> {
    /// Builds a client that follows `live`: its properties are applied as
    /// [`config`](Builder::config) applies them, and, when
    /// `spring.cloud.openfeign.client.refresh-enabled` (or `feign.client.refresh-enabled`) is
    /// `true`, applied again whenever `live` reloads different ones (its
    /// [`watch`](LiveConfig::watch) or an explicit [`reload`](LiveConfig::reload)). Without
    /// the switch the client keeps the properties it was built with, as in Spring.
    ///
    /// A refresh rebuilds the client's settings from this builder with the new properties over
    /// it, and swaps them in whole: the timeouts, the URL, the default headers and query
    /// parameters, the logger level, the retryer, `dismiss404`, compression, and the circuit
    /// breaker and bulkhead settings. A call keeps the settings it started with to its end; the
    /// calls that start after the swap use the new ones. The breakers' and the bulkhead's state,
    /// and the transport's connections, are kept while their own properties read the same. The
    /// layers of [`layer`](Builder::layer), set in code, are kept as they are, state included.
    ///
    /// A new value the client cannot bind (an unknown key, a duration that does not parse, an
    /// invalid URL) changes nothing in it: the error, naming the key and its file, is logged at
    /// `ERROR` by `tracing`, and the client keeps its settings until the next reload.
    ///
    /// The properties apply over every setting of the builder, whatever the order of the calls
    /// (as if `config` were called just before `build`). `build` returns the errors `config`
    /// does for the properties in force then.
    ///
    /// ```
    /// use feign_core::config::LiveConfig;
    /// use feign_core::{feign_client, Error};
    ///
    /// #[feign_client("orders")]
    /// pub trait Orders {
    ///     #[get("/orders")]
    ///     async fn list(&self) -> Result<String, Error>;
    /// }
    ///
    /// let dir = std::env::temp_dir().join(format!("feign-live-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let file = dir.join("application.yml");
    /// std::fs::write(&file, "spring.cloud.openfeign.client:\n  refresh-enabled: true\n  config.orders.url: http://127.0.0.1:8080\n")?;
    /// let live = LiveConfig::from_files([&file])?;
    /// let orders = OrdersClient::builder().live_config(&live).build()?;
    /// // Later: `live.watch(Duration::from_secs(1))?` keeps the client in step with the file.
    /// # let _ = orders;
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn live_config(mut self, live: &LiveConfig) -> Self {
        self.live = Some(live.clone());
        self
    }

    /// `build` of a builder given [`live_config`](Builder::live_config).
    pub(super) fn build_live(mut self) -> Result<Core, Error> {
        let Some(live) = self.live.take() else {
            return Ok(Core::new(self.build_inner()?));
        };
        let config = live.current();
        // Without the client type, which the listener, `'static`, need not name.
        let base: Builder<()> = self.clone_base();
        let core = Core::new(self.config(&config)?.build_inner()?);
        if !refresh_enabled(&config)? {
            return Ok(core);
        }
        let (core, current) = core.into_live();
        let follower = Follower {
            base,
            current: Arc::downgrade(&current),
            applied: Mutex::new(config),
        };
        live.on_change(move |config| follower.follow(config));
        Ok(core)
    }

    /// A copy of every setting but the live source and the layers: those are built once, with
    /// the first core, and every rebuilt core takes them from its predecessor.
    fn clone_base<D>(&self) -> Builder<D> {
        Builder {
            meta: self.meta,
            url: self.url.clone(),
            interceptors: self.interceptors.clone(),
            response_interceptors: self.response_interceptors.clone(),
            layers: Vec::new(),
            compression: self.compression.clone(),
            encoder: self.encoder.clone(),
            decoder: self.decoder.clone(),
            error_decoder: self.error_decoder.clone(),
            retry: self.retry.clone(),
            hedging: self.hedging,
            client: self.client.clone(),
            resolver: self.resolver.clone(),
            options: self.options,
            log_level: self.log_level,
            limits: self.limits,
            dismiss_404: self.dismiss_404,
            default_headers: self.default_headers.clone(),
            default_query: self.default_query.clone(),
            resilience: self.resilience.clone(),
            http: self.http.clone(),
            live: None,
            client_type: std::marker::PhantomData,
        }
    }
}

/// Whether the properties turn refreshing on.
fn refresh_enabled(config: &Config) -> Result<bool, ConfigError> {
    let mut enabled = false;
    for key in REFRESH_ENABLED {
        if let Some(property) = config.get(key)? {
            enabled = property.as_bool()?;
        }
    }
    Ok(enabled)
}

/// What a live client's listener holds: the builder to rebuild from, and the properties in
/// force.
struct Follower {
    base: Builder<()>,
    current: Weak<Live<CoreInner>>,
    applied: Mutex<Arc<Config>>,
}

impl Follower {
    /// Applies `config`, or logs why it cannot; stops listening once the client is gone.
    fn follow(&self, config: &Arc<Config>) -> ControlFlow<()> {
        let Some(current) = self.current.upgrade() else {
            return ControlFlow::Break(());
        };
        let mut applied = self.applied.lock().unwrap_or_else(PoisonError::into_inner);
        match self.rebuild(&current, &applied, config) {
            Ok(core) => {
                current.store(core.into_inner());
                *applied = config.clone();
                tracing::info!(
                    service = self.base.meta.service,
                    "client settings refreshed"
                );
            }
            Err(error) => tracing::error!(
                service = self.base.meta.service,
                "new properties not applied, the client keeps its settings: {error}"
            ),
        }
        ControlFlow::Continue(())
    }

    /// The client's core under `config`, with the state of the previous core that `config`
    /// leaves as it was.
    fn rebuild(
        &self,
        current: &Live<CoreInner>,
        before: &Config,
        config: &Config,
    ) -> Result<Core, Error> {
        let mut inner = self.base.clone_base::<()>().config(config)?.build_inner()?;
        let old = current.load();
        // The layers are set in code, never by properties: the same ones, state included.
        inner.around.clone_from(&old.around);
        if same(before, config, &RESILIENCE) {
            inner.resilience = old.resilience.clone();
        }
        let keeps_transport = self.base.client.is_none()
            && same(before, config, &TRANSPORT)
            && same_bundles(before, config);
        // The exchange was just built, so it is not shared yet.
        if let Some(exchange) = Arc::get_mut(&mut inner.exchange).filter(|_| keeps_transport) {
            exchange.client = old.exchange.client.clone();
        }
        Ok(Core::new(inner))
    }
}

/// Whether `before` and `after` hold the same values under every one of `prefixes`.
fn same(before: &Config, after: &Config, prefixes: &[&str]) -> bool {
    prefixes.iter().all(|p| before.same_section(after, p))
}

/// Whether every client section names the same `ssl-bundle` in both.
fn same_bundles(before: &Config, after: &Config) -> bool {
    CLIENT_SECTIONS.iter().all(|sections| {
        let mut names = before.section_names(sections);
        names.extend(after.section_names(sections));
        names
            .iter()
            .all(|name| before.same_section(after, &format!("{sections}.{name}.ssl-bundle")))
    })
}
