//! The instance's status from the application's health (Netflix's `HealthCheckHandler`,
//! Spring's `eureka.client.healthcheck.enabled`): polled at the replication interval, each
//! answer bounded by a timeout and guarded against panics.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};

use crate::model::InstanceStatus;

use super::registration::Registration;

/// The application's health, as the status this instance should register.
///
/// Asked every replication interval
/// ([`instance_info_replication_interval`](crate::EurekaClientBuilder::instance_info_replication_interval),
/// default 30 s) with the status registered now, as Netflix's `HealthCheckHandler::getStatus`
/// is; an answer that differs is sent to Eureka at once (within the on-demand rate limit), not
/// at the next heartbeat. An answer that takes longer than the
/// [health check timeout](crate::EurekaClientBuilder::health_check_timeout), or a panic, reads as
/// `DOWN` and is logged, as Netflix reads an exception from the handler; heartbeats go on
/// meanwhile, since the check runs in a task of its own. The timeout can only cut off a check
/// that awaits: one that blocks its thread (a synchronous database ping) should run in
/// `tokio::task::spawn_blocking`.
///
/// Any `Fn(InstanceStatus) -> impl Future<Output = InstanceStatus>` closure is a health check;
/// a synchronous one returns `std::future::ready(status)`. The future is boxed so the trait
/// stays object-safe and the client can hold it as `Arc<dyn HealthCheck>`.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
///
/// use feign_eureka::model::InstanceStatus;
/// use feign_eureka::EurekaClient;
///
/// let database_up = Arc::new(AtomicBool::new(true));
/// let builder = EurekaClient::builder().health_check(move |_registered| {
///     let up = database_up.load(Ordering::Relaxed);
///     std::future::ready(if up { InstanceStatus::Up } else { InstanceStatus::Down })
/// });
/// # let _ = builder;
/// ```
pub trait HealthCheck: Send + Sync + 'static {
    /// The status to register, given the one registered now (`current`).
    fn status(&self, current: InstanceStatus) -> BoxFuture<'static, InstanceStatus>;
}

impl<F, Fut> HealthCheck for F
where
    F: Fn(InstanceStatus) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = InstanceStatus> + Send + 'static,
{
    fn status(&self, current: InstanceStatus) -> BoxFuture<'static, InstanceStatus> {
        Box::pin(self(current))
    }
}

/// The health poll: the check and its bounds.
#[derive(Clone)]
pub(crate) struct HealthPoll {
    pub(crate) check: Arc<dyn HealthCheck>,
    pub(crate) interval: Duration,
    pub(crate) timeout: Duration,
}

impl HealthPoll {
    /// Asks the check once. It runs in a task of its own, so a panic (in the call or in its
    /// future) is caught; a panic or a timeout reads as `DOWN`.
    async fn ask(&self, current: InstanceStatus) -> InstanceStatus {
        let check = self.check.clone();
        let mut task = tokio::spawn(async move { check.status(current).await });
        match tokio::time::timeout(self.timeout, &mut task).await {
            Ok(Ok(status)) => status,
            Ok(Err(error)) => {
                tracing::warn!(target: "feign_eureka", %error, "the health check failed; reporting DOWN");
                InstanceStatus::Down
            }
            Err(_) => {
                task.abort();
                tracing::warn!(target: "feign_eureka", timeout = ?self.timeout, "the health check did not answer in time; reporting DOWN");
                InstanceStatus::Down
            }
        }
    }

    /// Polls the check at once, then every interval, and reports each answer as the status.
    pub(crate) async fn run(&self, registration: &Registration, mut stop: watch::Receiver<bool>) {
        let mut next = Instant::now();
        loop {
            tokio::select! {
                _ = sleep_until(next) => {}
                _ = stop.changed() => return,
            }
            let status = tokio::select! {
                status = self.ask(registration.status()) => status,
                _ = stop.changed() => return,
            };
            if status != registration.status() {
                tracing::info!(target: "feign_eureka", from = %registration.status(), to = %status, "the health check changed this instance's status");
                registration.set_status(status);
            }
            next = Instant::now() + self.interval;
        }
    }
}
