//! The registry's timers: eviction, the renewals-per-minute bucket, the threshold update, delta
//! retention and the read-only cache refresh.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

use super::registry::Registry;

fn every(
    registry: &Arc<Registry>,
    period: Duration,
    mut tick: impl FnMut(&Registry, Duration) + Send + 'static,
) -> JoinHandle<()> {
    let weak: Weak<Registry> = Arc::downgrade(registry);
    tokio::spawn(async move {
        let mut timer = tokio::time::interval_at(Instant::now() + period, period);
        timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut last = Instant::now();
        loop {
            timer.tick().await;
            let Some(registry) = weak.upgrade() else {
                return;
            };
            let now = Instant::now();
            let late = now.duration_since(last).saturating_sub(period);
            last = now;
            tick(&registry, late);
        }
    })
}

/// Starts every timer; they stop when the registry is dropped or the handles are aborted.
pub(crate) fn spawn(registry: &Arc<Registry>) -> Vec<JoinHandle<()>> {
    let config = registry.config.clone();
    vec![
        every(registry, config.eviction_interval, |r, late| {
            let late_ms = u64::try_from(late.as_millis()).unwrap_or(u64::MAX);
            r.evict(late_ms);
        }),
        every(registry, Duration::from_secs(60), |r, _| r.roll_renewals()),
        every(
            registry,
            config.renewal_threshold_update_interval,
            |r, _| r.update_threshold(),
        ),
        every(registry, config.delta_retention_interval, |r, _| {
            r.expire_delta()
        }),
        every(registry, config.cache_update_interval, |r, _| {
            r.refresh_cache()
        }),
    ]
}
