//! Heavy work kept off the runtime's workers: reading large request bodies (XML above all),
//! rendering, converting and compressing registry documents, the dashboard's pages. Each job
//! runs on tokio's blocking threads, at most one per core at a time, so a flood of heavy
//! requests waits its turn (without holding a worker) instead of stalling every worker or
//! starting a thread for each request, and a renewal or a small read is never queued behind
//! one.

use std::sync::Arc;

use tokio::sync::Semaphore;

/// The bounded pool heavy jobs run on.
#[derive(Debug, Clone)]
pub(crate) struct Offload {
    permits: Arc<Semaphore>,
}

impl Offload {
    /// A pool running at most one job per core at a time.
    pub(crate) fn per_core() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Self {
            permits: Arc::new(Semaphore::new(cores)),
        }
    }

    /// Runs `job` on a blocking thread once a slot is free; `None` when the runtime is shutting
    /// down and the job could not run. A panic in `job` is resumed here.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        // The semaphore is never closed; were it, the job would run unbounded rather than not.
        let permit = self.permits.clone().acquire_owned().await.ok();
        let ran = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            job()
        })
        .await;
        match ran {
            Ok(value) => Some(value),
            Err(error) => match error.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(_) => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn jobs_run_at_most_one_per_slot() {
        let offload = Offload {
            permits: Arc::new(Semaphore::new(1)),
        };
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let jobs: Vec<_> = (0..4)
            .map(|_| {
                let (offload, running) = (offload.clone(), running.clone());
                tokio::spawn(async move {
                    offload
                        .run(move || {
                            use std::sync::atomic::Ordering::SeqCst;
                            let at_once = running.fetch_add(1, SeqCst) + 1;
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            running.fetch_sub(1, SeqCst);
                            at_once
                        })
                        .await
                })
            })
            .collect();
        for job in jobs {
            assert_eq!(job.await.unwrap(), Some(1));
        }
    }
}
