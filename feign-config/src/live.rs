//! [`LiveConfig`]: properties read again when their files or the environment change, and the
//! listeners (clients, balancers) that follow them.

use std::fmt;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::config::APPLICATION_FILES;
use crate::{Config, ConfigError};

/// The shortest interval [`LiveConfig::watch`] polls at.
const MIN_POLL: Duration = Duration::from_millis(10);

/// Spring-style properties that follow their files and the environment: the current
/// [`Config`], swapped whole when a reload reads different properties, a version that counts
/// the changes, and listeners called with each new `Config`.
///
/// A reload (an explicit [`reload`](LiveConfig::reload), or the [`watch`](LiveConfig::watch)
/// poller) reads every source again. If a file cannot be read or parsed, the previous `Config`
/// stays in force and the error, naming the file (and the key when it is about one), is
/// logged at `ERROR` by `tracing` and returned from `reload`.
///
/// Clients opt in with `spring.cloud.openfeign.client.refresh-enabled: true` and
/// `feign_core::Builder::live_config`; feign-lb's `LiveLoadBalancer` follows one too. Each
/// listener checks the new properties itself: a value one of them cannot bind leaves that
/// listener's settings as they were.
///
/// Cheap to clone: clones share the sources, the current `Config` and the listeners.
///
/// ```
/// use std::time::Duration;
/// use feign_config::LiveConfig;
///
/// let dir = std::env::temp_dir().join(format!("feign-config-live-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let file = dir.join("application.yml");
/// std::fs::write(&file, "orders:\n  read-timeout: 2s\n")?;
/// let live = LiveConfig::from_files([&file])?;
/// assert_eq!(live.current().get("orders.read-timeout")?.unwrap().as_str(), "2s");
///
/// std::fs::write(&file, "orders:\n  read-timeout: 5s\n")?;
/// assert!(live.reload()?);
/// assert_eq!(live.current().get("orders.read-timeout")?.unwrap().as_str(), "5s");
/// assert_eq!(live.version(), 1);
///
/// // A file that does not parse keeps the properties read before.
/// std::fs::write(&file, "orders: [unclosed\n")?;
/// let err = live.reload().unwrap_err();
/// assert!(err.to_string().contains("application.yml"));
/// assert_eq!(live.current().get("orders.read-timeout")?.unwrap().as_str(), "5s");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct LiveConfig {
    shared: Arc<Shared>,
}

/// A listener of [`LiveConfig::on_change`].
type Listener = Arc<dyn Fn(&Arc<Config>) -> ControlFlow<()> + Send + Sync>;

struct Shared {
    sources: Sources,
    current: ArcSwap<Config>,
    /// How many changes were applied; waiters of [`LiveConfig::changed_after`] watch it.
    version: watch::Sender<u64>,
    /// Held by a reload from reading to notifying, so reloads apply in order.
    reload: Mutex<Reload>,
    listeners: Mutex<Vec<Listener>>,
}

/// Where the properties come from.
#[derive(Debug)]
struct Sources {
    files: Vec<PathBuf>,
    /// Whether a file may be absent (the application files of a directory).
    optional: bool,
    /// Whether the environment is layered over the files.
    env: bool,
}

/// The text of every source at one moment.
#[derive(Clone, PartialEq, Eq, Default)]
struct Inputs {
    /// Each file's text, `None` when it is absent.
    files: Vec<Option<String>>,
    /// The environment variables that name properties, sorted.
    env: Vec<(String, String)>,
}

/// What the poller remembers between ticks.
#[derive(Default)]
struct Reload {
    /// The inputs of the current `Config`.
    applied: Inputs,
    /// Inputs read once and different from `applied`: applied when the next tick reads them
    /// again, so a file caught half-written is never applied.
    pending: Option<Inputs>,
    /// Inputs that failed to parse, not tried (nor logged) again until they change.
    rejected: Option<Inputs>,
    /// The last read failure logged, not logged again until it changes.
    read_failure: Option<String>,
}

impl LiveConfig {
    /// What [`Config::load`] reads (`application.yml`, `application.yaml`,
    /// `application.properties` from the working directory, then the environment), kept live.
    pub fn load() -> Result<Self, ConfigError> {
        LiveConfig::load_from(".")
    }

    /// What [`Config::load_from`] reads from `dir`, kept live: a file may appear, change or
    /// disappear later.
    pub fn load_from(dir: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let dir = dir.as_ref();
        LiveConfig::start(Sources {
            files: APPLICATION_FILES
                .iter()
                .map(|name| dir.join(name))
                .collect(),
            optional: true,
            env: true,
        })
    }

    /// These files, later ones overriding earlier ones (YAML for `.yml` / `.yaml`, properties
    /// otherwise), without the environment. Each must exist, now and at every reload.
    pub fn from_files<P: AsRef<Path>>(
        files: impl IntoIterator<Item = P>,
    ) -> Result<Self, ConfigError> {
        LiveConfig::start(Sources {
            files: files.into_iter().map(|p| p.as_ref().to_owned()).collect(),
            optional: false,
            env: false,
        })
    }

    fn start(sources: Sources) -> Result<Self, ConfigError> {
        let inputs = sources.read()?;
        let config = sources.parse(&inputs)?;
        Ok(LiveConfig {
            shared: Arc::new(Shared {
                sources,
                current: ArcSwap::from_pointee(config),
                version: watch::Sender::new(0),
                reload: Mutex::new(Reload {
                    applied: inputs,
                    ..Reload::default()
                }),
                listeners: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The properties in force now.
    pub fn current(&self) -> Arc<Config> {
        self.shared.current.load_full()
    }

    /// How many changes have been applied since the properties were first read.
    pub fn version(&self) -> u64 {
        *self.shared.version.borrow()
    }

    /// Waits until a change after `version` has been applied, and every listener has seen it;
    /// returns the new version. Returns at once when one already has.
    pub async fn changed_after(&self, version: u64) -> u64 {
        let mut changes = self.shared.version.subscribe();
        changes
            .wait_for(|now| *now > version)
            .await
            .map_or(version, |now| *now)
    }

    /// Reads every source again now. `Ok(true)`: the properties changed, the new ones are in
    /// force and every listener has seen them; `Ok(false)`: nothing changed. A source that
    /// cannot be read or parsed is an error (also logged), and the previous properties stay.
    ///
    /// Listeners run on the calling thread, before this returns.
    pub fn reload(&self) -> Result<bool, ConfigError> {
        let mut state = self.shared.lock_reload();
        let inputs = match self.shared.sources.read() {
            Ok(inputs) => inputs,
            Err(error) => {
                log_kept(&error);
                return Err(error);
            }
        };
        self.shared.apply(&mut state, inputs)
    }

    /// Polls the sources every `every` (at least 10 ms) on a thread of its own, and applies a
    /// change once two polls in a row read it, so a file caught half-written is not applied.
    /// A change that cannot be parsed is logged once and skipped until the file changes
    /// again. The thread stops when the returned [`Watcher`] is dropped, or when every clone
    /// of this `LiveConfig` is.
    pub fn watch(&self, every: Duration) -> std::io::Result<Watcher> {
        let every = every.max(MIN_POLL);
        let (stop, stopped) = mpsc::channel::<()>();
        let shared: Weak<Shared> = Arc::downgrade(&self.shared);
        std::thread::Builder::new()
            .name("feign-config-watch".into())
            .spawn(move || loop {
                if stopped.recv_timeout(every) != Err(RecvTimeoutError::Timeout) {
                    return;
                }
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                shared.poll();
            })?;
        Ok(Watcher { _stop: stop })
    }

    /// Calls `listener` with every new `Config`, after it is in force and before
    /// [`version`](LiveConfig::version) counts it, on the thread that reloaded; until it
    /// returns [`ControlFlow::Break`]. Listeners must not reload from inside.
    pub fn on_change<F>(&self, listener: F)
    where
        F: Fn(&Arc<Config>) -> ControlFlow<()> + Send + Sync + 'static,
    {
        self.shared.lock_listeners().push(Arc::new(listener));
    }
}

impl Shared {
    fn lock_reload(&self) -> MutexGuard<'_, Reload> {
        self.reload.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_listeners(&self) -> MutexGuard<'_, Vec<Listener>> {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// One tick of the poller.
    fn poll(&self) {
        let mut state = self.lock_reload();
        let inputs = match self.sources.read() {
            Ok(inputs) => {
                state.read_failure = None;
                inputs
            }
            Err(error) => {
                let message = error.to_string();
                if state.read_failure.as_ref() != Some(&message) {
                    log_kept(&error);
                    state.read_failure = Some(message);
                }
                return;
            }
        };
        if inputs == state.applied {
            state.pending = None;
            return;
        }
        if state.rejected.as_ref() == Some(&inputs) {
            return;
        }
        if state.pending.as_ref() != Some(&inputs) {
            state.pending = Some(inputs);
            return;
        }
        state.pending = None;
        // An error is logged by `apply` and remembered in `rejected`.
        let _ = self.apply(&mut state, inputs);
    }

    /// Parses `inputs` and, when they hold different properties, puts them in force.
    fn apply(&self, state: &mut Reload, inputs: Inputs) -> Result<bool, ConfigError> {
        let config = match self.sources.parse(&inputs) {
            Ok(config) => config,
            Err(error) => {
                log_kept(&error);
                state.rejected = Some(inputs);
                return Err(error);
            }
        };
        state.applied = inputs;
        state.rejected = None;
        if config == **self.current.load() {
            return Ok(false);
        }
        let config = Arc::new(config);
        self.current.store(config.clone());
        let listeners: Vec<Listener> = self.lock_listeners().clone();
        let done: Vec<Listener> = listeners
            .into_iter()
            .filter(|listener| listener(&config).is_break())
            .collect();
        if !done.is_empty() {
            self.lock_listeners()
                .retain(|l| !done.iter().any(|d| Arc::ptr_eq(l, d)));
        }
        self.version.send_modify(|version| *version += 1);
        tracing::info!(
            target: "feign_config",
            version = *self.version.borrow(),
            "configuration reloaded"
        );
        Ok(true)
    }
}

impl Sources {
    fn read(&self) -> Result<Inputs, ConfigError> {
        let mut files = Vec::with_capacity(self.files.len());
        for path in &self.files {
            match std::fs::read_to_string(path) {
                Ok(text) => files.push(Some(text)),
                Err(e) if self.optional && e.kind() == std::io::ErrorKind::NotFound => {
                    files.push(None);
                }
                Err(e) => {
                    return Err(ConfigError::source(
                        &path.display().to_string(),
                        e.to_string(),
                    ))
                }
            }
        }
        let mut env = Vec::new();
        if self.env {
            env = std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .filter(|(k, _)| crate::key::from_env_name(k).is_some())
                .collect();
            env.sort();
        }
        Ok(Inputs { files, env })
    }

    fn parse(&self, inputs: &Inputs) -> Result<Config, ConfigError> {
        let mut config = Config::new();
        for (path, text) in self.files.iter().zip(&inputs.files) {
            if let Some(text) = text {
                config = config.with(Config::from_file_text(path, text)?);
            }
        }
        Ok(config.with_env_vars(inputs.env.iter().map(|(k, v)| (k, v.clone()))))
    }
}

/// Logs a reload that failed, the previous properties kept.
fn log_kept(error: &ConfigError) {
    tracing::error!(
        target: "feign_config",
        file = error.origin(),
        key = error.key(),
        "configuration not reloaded, the previous one stays in force: {error}"
    );
}

/// Stops [`LiveConfig::watch`]'s thread when dropped.
#[must_use = "the watch stops when the Watcher is dropped"]
pub struct Watcher {
    _stop: mpsc::Sender<()>,
}

impl fmt::Debug for Watcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl fmt::Debug for LiveConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveConfig")
            .field("files", &self.shared.sources.files)
            .field("env", &self.shared.sources.env)
            .field("version", &self.version())
            .field("config", &*self.current())
            .finish()
    }
}
