//! What the example measures and cleans up: a SHA-256 computed as bytes stream past, the test
//! file it generates, the process's peak resident memory, and its temporary directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tokio::io::AsyncWriteExt;

use quickstart::StepResult;

/// A SHA-256 fed chunk by chunk, as a file streams through.
pub(crate) struct Sha256(ring::digest::Context);

impl Sha256 {
    pub(crate) fn new() -> Sha256 {
        Sha256(ring::digest::Context::new(&ring::digest::SHA256))
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest, lower-case hex.
    pub(crate) fn finish(self) -> String {
        self.0
            .finish()
            .as_ref()
            .iter()
            .fold(String::with_capacity(64), |mut hex, byte| {
                let _ = write!(hex, "{byte:02x}");
                hex
            })
    }
}

/// Writes `size` pseudo-random bytes (xorshift, so nothing compresses them) to `path`, in
/// 1 MiB pieces; returns their SHA-256.
pub(crate) async fn generate(path: &Path, size: u64) -> StepResult<String> {
    const PIECE: usize = 1 << 20;
    let mut file = tokio::io::BufWriter::new(tokio::fs::File::create(path).await?);
    let (mut sha256, mut state, mut piece) = (Sha256::new(), 0x9e37_79b9_7f4a_7c15_u64, Vec::new());
    let mut left = size;
    while left > 0 {
        piece.clear();
        let take = left.min(PIECE as u64) as usize;
        while piece.len() < take {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            piece.extend_from_slice(&state.to_le_bytes());
        }
        piece.truncate(take);
        sha256.update(&piece);
        file.write_all(&piece).await?;
        left -= take as u64;
    }
    file.flush().await?;
    Ok(sha256.finish())
}

/// The process's peak resident memory in bytes (`VmHWM`), where the system reports it (Linux).
pub(crate) fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A directory of its own under the system's temporary directory, removed with everything in
/// it when dropped, including when a step fails.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new() -> StepResult<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .subsec_nanos();
        let path = std::env::temp_dir().join(format!(
            "feign-files-example-{}-{nanos}",
            std::process::id()
        ));
        // `create_dir`, not `create_dir_all`: it fails rather than reuse a directory.
        std::fs::create_dir(&path)?;
        Ok(TempDir(path))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
