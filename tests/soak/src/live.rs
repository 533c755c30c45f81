//! Live configuration: the callers are built from an `application.yml` with `refresh-enabled`,
//! which the plan edits during the run. Each edit numbers the configuration anew in a default
//! header, [`CONFIG_HEADER`], that the instances note, so the report can tell when the calls
//! began to carry it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use feign_core::config::LiveConfig;

/// The default header the configuration sets: its version number.
pub(crate) const CONFIG_HEADER: &str = "X-Soak-Config";

/// What editing the file may fail with.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// The configuration file, and when each version was applied.
pub(crate) struct LiveFile {
    dir: PathBuf,
    file: PathBuf,
    /// The clients it configures, by name.
    clients: &'static [&'static str],
    live: LiveConfig,
    /// When each version was applied, by version (version 1 at the start).
    applied: Arc<Mutex<Vec<Instant>>>,
}

impl LiveFile {
    /// Writes version 1, for the clients named `clients`, to a fresh temporary directory and
    /// reads it.
    pub(crate) fn start(clients: &'static [&'static str]) -> Result<LiveFile, Error> {
        let dir = std::env::temp_dir().join(format!("feign-soak-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let file = dir.join("application.yml");
        write(&file, clients, 1)?;
        let live = LiveConfig::from_files([&file])?;
        Ok(LiveFile {
            dir,
            file,
            clients,
            live,
            applied: Arc::new(Mutex::new(vec![Instant::now()])),
        })
    }

    /// What the callers are built from.
    pub(crate) fn live(&self) -> &LiveConfig {
        &self.live
    }

    /// Edits the file to `version` and has the callers read it, off the runtime's threads as a
    /// watcher thread would (the clients rebuild there); returns how long that took, or `Err`
    /// when the file could not be written or read, or the reading changed nothing.
    pub(crate) async fn apply(&self, version: u64) -> Result<Duration, Error> {
        let began = Instant::now();
        let (file, live, applied) = (self.file.clone(), self.live.clone(), self.applied.clone());
        let clients = self.clients;
        tokio::task::spawn_blocking(move || -> Result<(), Error> {
            write(&file, clients, version)?;
            if !live.reload()? {
                return Err(
                    format!("version {version} of the configuration changed nothing").into(),
                );
            }
            let mut applied = applied.lock().unwrap_or_else(|e| e.into_inner());
            applied.resize(version as usize, Instant::now());
            Ok(())
        })
        .await??;
        Ok(began.elapsed())
    }

    /// When each version was applied, by version − 1.
    pub(crate) fn applied(&self) -> Vec<Instant> {
        self.applied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Drop for LiveFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Writes `version` of the configuration of `clients`, replacing the file whole as an editor
/// saves it.
fn write(file: &std::path::Path, clients: &[&str], version: u64) -> std::io::Result<()> {
    let mut yaml =
        String::from("spring.cloud.openfeign.client:\n  refresh-enabled: true\n  config:\n");
    for service in clients {
        yaml.push_str(&format!(
            "    {service}:\n      default-request-headers:\n        {CONFIG_HEADER}: [\"{version}\"]\n"
        ));
    }
    let staged = file.with_extension("yml.tmp");
    std::fs::write(&staged, yaml)?;
    std::fs::rename(staged, file)
}

/// When the instances first saw each version of the configuration, as time since the start
/// of the run in ms (0: not yet), by version − 1.
#[derive(Debug)]
pub(crate) struct Seen {
    started: Instant,
    first_ms: Vec<AtomicU64>,
}

impl Seen {
    /// Room for `versions` versions.
    pub(crate) fn new(started: Instant, versions: usize) -> Arc<Seen> {
        Arc::new(Seen {
            started,
            first_ms: (0..versions).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// Notes a request carrying `value` in [`CONFIG_HEADER`].
    pub(crate) fn note(&self, value: &str) {
        let Some(slot) = value
            .parse::<usize>()
            .ok()
            .and_then(|version| version.checked_sub(1))
            .and_then(|index| self.first_ms.get(index))
        else {
            return;
        };
        if slot.load(Ordering::Relaxed) == 0 {
            let ms = self.started.elapsed().as_millis().max(1) as u64;
            let _ = slot.compare_exchange(0, ms, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    /// When each version was first seen, in ms since the start (`None`: never).
    pub(crate) fn first_ms(&self) -> Vec<Option<u64>> {
        self.first_ms
            .iter()
            .map(|ms| Some(ms.load(Ordering::Relaxed)).filter(|&ms| ms > 0))
            .collect()
    }
}
