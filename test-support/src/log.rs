//! Reading logs back.

use std::sync::{Arc, Mutex};

/// A writer that keeps everything written to it: give it to a `tracing` subscriber (as its
/// `make_writer`, through a closure returning a clone) and read the logs back from `.0`.
#[derive(Clone, Debug, Default)]
pub struct Captured(pub Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("captured lock").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
