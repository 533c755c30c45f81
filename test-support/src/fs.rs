//! Files for tests that read configuration from disk.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The Spring Boot client fixture's `application.yml`, read in place by the tests that check a
/// Spring user's file loads unchanged.
pub const JAVA_SVC_YML: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/interop/java-svc/src/main/resources/application.yml"
);

/// The Spring Cloud Netflix server fixture's `application.yml`, read in place.
pub const EUREKA_SERVER_YML: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/interop/eureka-server/src/main/resources/application.yml"
);

/// Both fixtures' `application.yml`.
pub const SPRING_FIXTURES: [&str; 2] = [JAVA_SVC_YML, EUREKA_SERVER_YML];

/// A fresh directory under the system temporary directory, removed with its contents on drop:
/// where tests write their config files. The path is `.0`.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// Creates `feign-test-{tag}-{pid}-{n}`, unique within the process for any `tag`.
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("feign-test-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    /// Writes `text` to the file `name` in this directory and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).expect("write a temporary file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
