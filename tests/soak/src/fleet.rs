//! The instances of both services, and which of them are healthy at any moment.
//!
//! Of each service's instances the first [`PROXIED`] sit behind a fault proxy and are never
//! stopped; the others are stopped, aborted and restarted (on a new port, as a restarted
//! container would be). The instances of [`TLS_SERVICE`] serve HTTPS.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_rustls::TlsAcceptor;

use crate::caller::SERVICES;
use crate::instance::{Books, Instance, Spec};
use crate::proxy::Mode;
use crate::registries::View;

/// Instances per service.
pub(crate) const PER_SERVICE: usize = 6;
/// Instances per service behind a fault proxy.
pub(crate) const PROXIED: usize = 2;
/// The service whose instances serve HTTPS (`beta`); the other serves plain HTTP.
pub(crate) const TLS_SERVICE: usize = 1;

/// Which instances are healthy: running, registered, and not behind a proxy that fails calls.
pub(crate) struct Health {
    healthy: Vec<AtomicBool>,
}

impl Health {
    fn new() -> Health {
        Health {
            healthy: (0..SERVICES.len() * PER_SERVICE)
                .map(|_| AtomicBool::new(false))
                .collect(),
        }
    }

    fn set(&self, service: usize, slot: usize, healthy: bool) {
        self.healthy[service * PER_SERVICE + slot].store(healthy, Ordering::SeqCst);
    }

    /// Healthy instances of `service` now.
    pub(crate) fn count(&self, service: usize) -> usize {
        self.healthy[service * PER_SERVICE..(service + 1) * PER_SERVICE]
            .iter()
            .filter(|healthy| healthy.load(Ordering::SeqCst))
            .count()
    }
}

/// Every instance slot of both services.
pub(crate) struct Fleet {
    slots: Vec<Option<Instance>>,
    /// Requests answered by each slot's instances, whichever ran there.
    served: Vec<Arc<AtomicU64>>,
    urls: Vec<String>,
    books: Books,
    tls: TlsAcceptor,
    health: Arc<Health>,
    seed: u64,
    starts: u64,
}

impl Fleet {
    /// Starts every instance and waits until each is registered.
    pub(crate) async fn start(
        urls: Vec<String>,
        books: Books,
        tls: TlsAcceptor,
        seed: u64,
    ) -> std::io::Result<Fleet> {
        let mut fleet = Fleet {
            slots: (0..SERVICES.len() * PER_SERVICE).map(|_| None).collect(),
            served: (0..SERVICES.len() * PER_SERVICE)
                .map(|_| Arc::new(AtomicU64::new(0)))
                .collect(),
            urls,
            books,
            tls,
            health: Arc::new(Health::new()),
            seed,
            starts: 0,
        };
        for service in 0..SERVICES.len() {
            for slot in 0..PER_SERVICE {
                fleet.restart(service, slot).await?;
            }
        }
        Ok(fleet)
    }

    /// The health board the load generator reads.
    pub(crate) fn health(&self) -> Arc<Health> {
        self.health.clone()
    }

    fn instance(&self, service: usize, slot: usize) -> Option<&Instance> {
        self.slots[service * PER_SERVICE + slot].as_ref()
    }

    /// The label of the instance in a slot, for the journal.
    pub(crate) fn label(&self, service: usize, slot: usize) -> String {
        self.instance(service, slot).map_or_else(
            || format!("{}#{slot} (down)", SERVICES[service]),
            |i| i.id.clone(),
        )
    }

    /// The id the instance in a slot registered under, if one runs there.
    pub(crate) fn instance_id(&self, service: usize, slot: usize) -> Option<String> {
        self.instance(service, slot).map(|i| i.instance_id.clone())
    }

    /// Stops an instance gracefully (deregistering first).
    pub(crate) async fn stop(&mut self, service: usize, slot: usize) {
        self.health.set(service, slot, false);
        if let Some(instance) = self.slots[service * PER_SERVICE + slot].take() {
            instance.stop().await;
        }
    }

    /// Aborts an instance: no deregistration, connections cut.
    pub(crate) fn abort(&mut self, service: usize, slot: usize) {
        self.health.set(service, slot, false);
        if let Some(instance) = self.slots[service * PER_SERVICE + slot].take() {
            instance.abort();
        }
    }

    /// Starts a fresh instance in a slot and marks it healthy once registered (at most 5 s).
    pub(crate) async fn restart(&mut self, service: usize, slot: usize) -> std::io::Result<()> {
        self.starts += 1;
        let seed = self.seed.wrapping_mul(1_000_003).wrapping_add(self.starts);
        let instance = Instance::start(Spec {
            service: SERVICES[service],
            proxied: slot < PROXIED,
            tls: (service == TLS_SERVICE).then(|| self.tls.clone()),
            urls: &self.urls,
            books: self.books.clone(),
            served: self.served[service * PER_SERVICE + slot].clone(),
            seed,
        })
        .await?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while !instance.is_registered() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let registered = instance.is_registered();
        self.slots[service * PER_SERVICE + slot] = Some(instance);
        self.health.set(service, slot, registered);
        if registered {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "{} did not register within 5 s",
                self.label(service, slot)
            )))
        }
    }

    /// Requests answered by each slot of `service`, whichever instances ran there.
    pub(crate) fn served(&self, service: usize) -> Vec<u64> {
        self.served[service * PER_SERVICE..(service + 1) * PER_SERVICE]
            .iter()
            .map(|served| served.load(Ordering::Relaxed))
            .collect()
    }

    /// Switches the proxy in front of a slot; the instance counts as healthy only while the
    /// mode lets calls succeed.
    pub(crate) fn set_proxy(&self, service: usize, slot: usize, mode: Mode) {
        if let Some(proxy) = self.instance(service, slot).and_then(Instance::proxy) {
            // Unhealthy before the fault starts, healthy only after it ends.
            if !mode.serves() {
                self.health.set(service, slot, false);
            }
            proxy.set_mode(mode);
            if mode.serves() {
                self.health.set(service, slot, true);
            }
        }
    }

    /// What every registry should list once things settle: each running instance, `UP`.
    pub(crate) fn expected_view(&self) -> View {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| {
                let instance = slot.as_ref()?;
                Some((
                    SERVICES[index / PER_SERVICE].to_ascii_uppercase(),
                    instance.instance_id.clone(),
                    "UP".to_owned(),
                ))
            })
            .collect()
    }

    /// The ports of every running instance and of the proxies in front, named.
    pub(crate) fn ports(&self) -> Vec<(u16, String)> {
        let mut ports = Vec::new();
        for instance in self.slots.iter().flatten() {
            ports.push((instance.served.port(), format!("{} server", instance.id)));
            if let Some(proxy) = instance.proxy() {
                ports.push((proxy.addr().port(), format!("{} proxy", instance.id)));
            }
        }
        ports
    }

    /// Whether any proxy is still in a faulting mode.
    pub(crate) fn proxies_faulting(&self) -> bool {
        self.slots
            .iter()
            .flatten()
            .filter_map(Instance::proxy)
            .any(|proxy| proxy.mode() != Mode::Pass)
    }

    /// Stops every instance gracefully.
    pub(crate) async fn shutdown(mut self) {
        for service in 0..SERVICES.len() {
            for slot in 0..PER_SERVICE {
                self.stop(service, slot).await;
            }
        }
    }
}
