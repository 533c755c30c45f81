//! Spring Cloud LoadBalancer's metrics through the `metrics` facade, with Spring's names and
//! tags: handles are registered once per instance (and service) and reused by every attempt.
//!
//! The facade is a no-op until the application installs a recorder; install it before the
//! balancer first sees an instance, as every `metrics` exporter asks.

use feign_core::resolve::AttemptOutcome;
use metrics::{Counter, Gauge, Label};

use crate::ServiceInstance;

/// Attempts in flight, a gauge per instance.
pub(crate) const ACTIVE: &str = "loadbalancer.requests.active";
/// Attempts that got a response (any status), per instance and outcome.
pub(crate) const SUCCESS: &str = "loadbalancer.requests.success";
/// Attempts that failed without a response, per instance.
pub(crate) const FAILED: &str = "loadbalancer.requests.failed";
/// Picks with no instance and cancelled attempts, per service.
pub(crate) const DISCARD: &str = "loadbalancer.requests.discard";

/// Spring's `outcome` tag values, by status class.
const OUTCOMES: [&str; 6] = [
    "INFORMATIONAL",
    "SUCCESS",
    "REDIRECTION",
    "CLIENT_ERROR",
    "SERVER_ERROR",
    "UNKNOWN",
];

/// The handles of one service.
pub(crate) struct ServiceMetrics {
    discard: Counter,
}

impl ServiceMetrics {
    pub(crate) fn new(service: &str) -> Self {
        ServiceMetrics {
            discard: metrics::counter!(DISCARD, "serviceId" => service.to_owned()),
        }
    }

    pub(crate) fn discarded(&self) {
        self.discard.increment(1);
    }
}

/// The counters of one instance, tagged as Spring tags them. Every outcome's counter is
/// registered with the instance, so an attempt never allocates, and every series starts at zero
/// (as Prometheus advises for known label values). The in-flight gauge is kept apart, with the
/// state a pick touches (see [`active_gauge`]).
pub(crate) struct InstanceMetrics {
    success: [Counter; OUTCOMES.len()],
    failed: Counter,
}

/// Spring's `serviceInstance.*` tags (and `serviceId`).
fn tags(instance: &ServiceInstance) -> Vec<Label> {
    vec![
        Label::new("serviceId", instance.service_id().to_owned()),
        Label::new(
            "serviceInstance.instanceId",
            instance.instance_id().to_owned(),
        ),
        Label::new("serviceInstance.host", instance.host().to_owned()),
        Label::new("serviceInstance.port", instance.port().to_string()),
        Label::new("serviceInstance.secure", instance.is_secure().to_string()),
    ]
}

/// The instance's gauge of attempts in flight, moved up and down by the pick and the completion.
pub(crate) fn active_gauge(instance: &ServiceInstance) -> Gauge {
    metrics::gauge!(ACTIVE, tags(instance))
}

impl InstanceMetrics {
    pub(crate) fn new(instance: &ServiceInstance) -> Self {
        InstanceMetrics {
            success: OUTCOMES.map(|outcome| {
                let mut labels = tags(instance);
                labels.push(Label::from_static_parts("outcome", outcome));
                metrics::counter!(SUCCESS, labels)
            }),
            failed: metrics::counter!(FAILED, tags(instance)),
        }
    }

    /// An attempt to the instance ended; a discarded one is counted per service by the caller.
    pub(crate) fn completed(&self, outcome: &AttemptOutcome<'_>) {
        match outcome {
            AttemptOutcome::Response(status) => {
                let class = usize::from(status.as_u16() / 100);
                let index = if (1..=5).contains(&class) {
                    class - 1
                } else {
                    5
                };
                self.success[index].increment(1);
            }
            AttemptOutcome::Failed(_) => self.failed.increment(1),
            _ => {}
        }
    }
}
