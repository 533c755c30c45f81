//! The registry's timers: eviction, the renewals-per-minute bucket, the threshold update, delta
//! retention and the read-only cache refresh.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};

use crate::offload::Offload;
use crate::registry::Registry;

fn every(
    registry: &Arc<Registry>,
    period: Duration,
    mut tick: impl FnMut(&Arc<Registry>, Duration) + Send + 'static,
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

/// Refreshes the read-only cache every `period`, each refresh (which renders whatever changed)
/// as a heavy job.
fn refresh_cache(registry: &Arc<Registry>, period: Duration, offload: Offload) -> JoinHandle<()> {
    let weak: Weak<Registry> = Arc::downgrade(registry);
    tokio::spawn(async move {
        let mut timer = tokio::time::interval_at(Instant::now() + period, period);
        timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            timer.tick().await;
            let Some(registry) = weak.upgrade() else {
                return;
            };
            if offload
                .run(move || registry.refresh_cache())
                .await
                .is_none()
            {
                return;
            }
        }
    })
}

/// Starts every timer; they stop when the registry is dropped or the handles are aborted.
pub(crate) fn spawn(registry: &Arc<Registry>, offload: &Offload) -> Vec<JoinHandle<()>> {
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
            r.expire_delta();
        }),
        refresh_cache(registry, config.cache_update_interval, offload.clone()),
    ]
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::ServerConfig;
    use crate::replicator::Replicator;
    use feign_core::clock::Clock;
    use feign_eureka::model::{InstanceInfo, LeaseInfo};

    fn registry(self_preservation: bool, netflix_expiry: bool) -> Arc<Registry> {
        let config = ServerConfig {
            self_preservation,
            netflix_expiry,
            ..ServerConfig::default()
        };
        Arc::new(Registry::new(
            Arc::new(config),
            Clock::new(),
            Replicator::default(),
        ))
    }

    fn instance(id: &str) -> InstanceInfo {
        let mut info = InstanceInfo::new("A", "127.0.0.1", "127.0.0.1", 80);
        info.instance_id = Some(id.to_owned());
        info.lease_info = Some(LeaseInfo::new(30, 90));
        info
    }

    #[tokio::test(start_paused = true)]
    async fn the_eviction_timer_honours_netflix_expiry() {
        let registry = registry(false, true);
        let _tasks = spawn(&registry, &Offload::per_core());
        registry.register(instance("renewed"), false).unwrap();
        registry.register(instance("silent"), false).unwrap();
        tokio::time::sleep(Duration::from_secs(10)).await;
        registry.renew("A", "renewed", None, None, false);
        // 90 s lease, 60 s timer: the silent one expires at 90 s and goes at the 120 s tick.
        tokio::time::sleep(Duration::from_secs(111)).await;
        assert_eq!(registry.size(), 1);
        // Renewed at 10 s, it lives two durations: expired after 190 s, evicted at 240 s.
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(registry.size(), 1);
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(registry.size(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn self_preservation_engages_when_renewals_drop() {
        let registry = registry(true, false);
        let _tasks = spawn(&registry, &Offload::per_core());
        for i in 0..10 {
            registry
                .register(instance(&format!("i-{i}")), false)
                .unwrap();
        }
        // Not expected to renew until they have: threshold floor(1 * 2 * 0.85) = 1.
        assert_eq!(registry.expectation().renews_threshold, 1);
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_secs(30)).await;
            for i in 0..10 {
                registry.renew("A", &format!("i-{i}"), None, None, false);
            }
        }
        // Renewed 30 s after registering, each is expected: 11 -> threshold
        // floor(11 * 2 * 0.85) = 18; 10 instances renewing every 30 s give 20 renewals a
        // minute: eviction stays enabled.
        assert_eq!(registry.expectation().renews_threshold, 18);
        assert_eq!(registry.renews_last_min(), 20);
        assert!(registry.lease_expiration_enabled());
        // Everyone goes silent: after a minute without renewals, self-preservation keeps them.
        tokio::time::sleep(Duration::from_secs(300)).await;
        assert_eq!(registry.renews_last_min(), 0);
        assert!(!registry.lease_expiration_enabled());
        assert_eq!(registry.size(), 10);
    }

    fn short(id: &str) -> InstanceInfo {
        let mut info = instance(id);
        info.lease_info = Some(LeaseInfo::new(1, 1));
        info
    }

    #[tokio::test(start_paused = true)]
    async fn leases_that_never_proved_their_clients_go_while_self_preservation_holds_the_rest() {
        let registry = registry(true, true);
        let _tasks = spawn(&registry, &Offload::per_core());
        for i in 0..10 {
            registry
                .register(instance(&format!("i-{i}")), false)
                .unwrap();
        }
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_secs(30)).await;
            for i in 0..10 {
                registry.renew("A", &format!("i-{i}"), None, None, false);
            }
        }
        assert!(registry.lease_expiration_enabled());
        // A burst of one-second leases, each renewed once a second later, then silence.
        for i in 0..50 {
            registry.register(short(&format!("s-{i}")), false).unwrap();
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        for i in 0..50 {
            registry.renew("A", &format!("s-{i}"), None, None, false);
        }
        assert_eq!(
            registry.expectation().expected_clients,
            11,
            "not expected to renew"
        );
        // Then everything goes silent, as in a real outage: self-preservation engages and
        // keeps the ten established leases, while the burst is evicted.
        tokio::time::sleep(Duration::from_secs(300)).await;
        assert!(!registry.lease_expiration_enabled());
        assert_eq!(registry.size(), 10);
    }
}
