//! The backup registry: instances to serve when Eureka cannot be reached at start.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::model::{Application, Applications, InstanceInfo};

use super::error::Chain;

/// Instances a client serves when no Eureka server answers its first fetch, like Netflix's
/// `BackupRegistry`: a Eureka registry document in a file (for example one saved from
/// `GET /eureka/apps` with `Accept: application/json`), a fixed list of instances, or both.
///
/// Given to [`EurekaClientBuilder::backup_registry`](crate::EurekaClientBuilder::backup_registry).
/// It is loaded only when the first fetch fails, serves only until a fetch succeeds, and goes
/// through the same routing rules as fetched instances (only `UP` instances with usable
/// addresses are routed to). The file is read once, when it is needed; a file that cannot be
/// read or parsed is logged and left out.
///
/// ```
/// use feign_eureka::model::InstanceInfo;
/// use feign_eureka::{BackupRegistry, EurekaClient};
///
/// let backup = BackupRegistry::new()
///     .file("eureka-registry.json")
///     .instances([InstanceInfo::new("payment-service", "10.0.0.7", "10.0.0.7", 8080)]);
/// let builder = EurekaClient::builder()
///     .service_urls(["http://127.0.0.1:8761/eureka/"])
///     .backup_registry(backup);
/// # let _ = builder;
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct BackupRegistry {
    file: Option<PathBuf>,
    instances: Vec<InstanceInfo>,
}

impl BackupRegistry {
    /// An empty backup registry; add a file and/or instances.
    pub fn new() -> Self {
        BackupRegistry::default()
    }

    /// Reads the backup from a file holding a Eureka `{"applications":{...}}` document, read
    /// tolerantly like fetched registries (default: no file).
    pub fn file(mut self, path: impl Into<PathBuf>) -> Self {
        self.file = Some(path.into());
        self
    }

    /// Adds these instances, grouped into applications by their `app` (default: none).
    pub fn instances(mut self, instances: impl IntoIterator<Item = InstanceInfo>) -> Self {
        self.instances.extend(instances);
        self
    }

    /// The backup listing: the file's applications (if it reads) with the fixed instances
    /// added. `Err` says why nothing could be loaded.
    pub(crate) fn load(&self, max_bytes: usize) -> Result<Applications, BackupError> {
        let mut by_app: BTreeMap<String, Vec<InstanceInfo>> = BTreeMap::new();
        let mut file_error = None;
        if let Some(path) = &self.file {
            match read_listing(path, max_bytes) {
                Ok(listing) => {
                    for app in listing.applications {
                        by_app.entry(app.name).or_default().extend(app.instances);
                    }
                }
                Err(e) => {
                    tracing::warn!(target: "feign_eureka", error = %Chain(&e), "backup registry file left out");
                    file_error = Some(e);
                }
            }
        }
        for info in &self.instances {
            by_app
                .entry(info.app.to_ascii_uppercase())
                .or_default()
                .push(info.clone());
        }
        if by_app.is_empty() {
            return Err(file_error.unwrap_or(BackupError::Empty));
        }
        Ok(Applications::new(
            by_app
                .into_iter()
                .map(|(name, instances)| Application::new(&name, instances))
                .collect(),
        ))
    }
}

/// Why a backup registry could not be loaded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BackupError {
    /// Neither a readable file nor fixed instances.
    #[error("the backup registry is empty")]
    Empty,
    /// The file could not be read.
    #[error("cannot read {}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than the registry size limit.
    #[error("{}: larger than {max_bytes} bytes", .path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        max_bytes: usize,
    },
    /// The file is not a Eureka `{"applications":{...}}` document.
    #[error("{}: not a eureka registry", .path.display())]
    NotARegistry {
        /// The file.
        path: PathBuf,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
}

fn read_listing(path: &Path, max_bytes: usize) -> Result<Applications, BackupError> {
    let read = |source| BackupError::Read {
        path: path.to_owned(),
        source,
    };
    let len = std::fs::metadata(path).map_err(read)?.len();
    if len > max_bytes as u64 {
        return Err(BackupError::TooLarge {
            path: path.to_owned(),
            max_bytes,
        });
    }
    let json = std::fs::read(path).map_err(read)?;
    Applications::from_json(&json).map_err(|source| BackupError::NotARegistry {
        path: path.to_owned(),
        source,
    })
}

impl fmt::Debug for BackupRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackupRegistry")
            .field("file", &self.file)
            .field("instances", &self.instances.len())
            .finish()
    }
}
