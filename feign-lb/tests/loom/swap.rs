//! The in-flight count across snapshot swaps: an attempt is counted exactly once by the service
//! (neither lost nor doubled when its instance is listed again or retired), every count is back
//! to zero once the attempts end, and a removed instance's stats are freed only once no attempt
//! and no snapshot holds them, at the first rebuild after its last attempt. An instance listed
//! again under its id keeps its stats only if it is the same instance (`listed::reuse`): one
//! that changed starts afresh while its old listing, retired, keeps its attempt. Rebuilds go
//! through the real gate, which lets one caller rebuild at a time and builds each version once.

use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread::{self, JoinHandle};

use crate::listed::{self, Listed, Rebuilding};
use crate::stats::InstanceStats;
use crate::support::{check, ArcSwap};
use crate::ServiceInstance;

/// Instance `id` on `port`.
const fn at(id: &'static str, port: u16) -> ServiceInstance {
    ServiceInstance { id, port }
}

const A: ServiceInstance = at("a", 1);
const B: ServiceInstance = at("b", 1);
const C: ServiceInstance = at("c", 1);

/// A snapshot reduced to what the count reads: the listed and the retired instances.
struct Snapshot {
    version: u64,
    stats: Vec<Listed>,
    retired: Vec<Listed>,
}

impl Snapshot {
    /// Attempts in flight, as `ServiceLb::in_flight` sums them.
    fn in_flight(&self) -> u32 {
        self.stats
            .iter()
            .chain(&self.retired)
            .map(Listed::in_flight)
            .sum()
    }
}

/// A service reduced to its published snapshot and the rebuild gate.
struct Service {
    published: ArcSwap<Snapshot>,
    rebuilding: Rebuilding,
    builds: AtomicUsize,
}

impl Service {
    /// Version 1, listing `a` and `b`; with flags set when their stats are freed.
    fn new() -> (Arc<Service>, [Arc<AtomicBool>; 2]) {
        let freed = [(); 2].map(|_| Arc::new(AtomicBool::new(false)));
        let stats = [A, B]
            .iter()
            .zip(&freed)
            .map(|(instance, freed)| {
                Listed::new(Arc::new(InstanceStats::new(*instance, freed.clone())))
            })
            .collect();
        let snapshot = Snapshot {
            version: 1,
            stats,
            retired: Vec::new(),
        };
        let service = Service {
            published: ArcSwap::from_pointee(snapshot),
            rebuilding: Rebuilding::default(),
            builds: AtomicUsize::new(0),
        };
        (Arc::new(service), freed)
    }

    /// Moves to `version`, listing `instances`, as `ServiceLb::refresh` does: through the gate,
    /// each instance found by its id in the current snapshot keeping its listing when
    /// `listed::reuse` says so (`Snapshot::build`), the others with attempts in flight retired.
    fn refresh(&self, version: u64, instances: &[ServiceInstance]) {
        let stale = |s: &Snapshot| s.version != version;
        self.rebuilding.run(&self.published, stale, |current| {
            self.builds.fetch_add(1, Ordering::Relaxed);
            let stats: Vec<Listed> = instances
                .iter()
                .map(|instance| {
                    let by_id = current.stats.iter().find(|s| s.instance.id == instance.id);
                    listed::reuse(by_id, instance).unwrap_or_else(|| {
                        let freed = Arc::new(AtomicBool::new(false));
                        Listed::new(Arc::new(InstanceStats::new(*instance, freed)))
                    })
                })
                .collect();
            let listed_again = |s: &Listed| stats.iter().any(|kept| kept.same(s));
            let previous = current.stats.iter().chain(&current.retired);
            let retired = listed::retire(previous, listed_again);
            Snapshot {
                version,
                stats,
                retired,
            }
        });
    }

    /// An attempt to `id`, picked from the published snapshot.
    fn attempt(&self, id: &str) -> Arc<InstanceStats> {
        let snapshot = self.published.load();
        let listed = snapshot
            .stats
            .iter()
            .find(|s| s.instance.id == id)
            .expect("listed");
        listed.attempt()
    }

    fn in_flight(&self) -> u32 {
        self.published.load().in_flight()
    }
}

/// A thread moving `service` to `version`, listing `instances`.
fn refreshing(
    service: &Arc<Service>,
    version: u64,
    instances: &'static [ServiceInstance],
) -> JoinHandle<()> {
    let service = service.clone();
    thread::spawn(move || service.refresh(version, instances))
}

/// Drops `dropped` on one thread while another moves `service` to version 2 without `a`.
fn drop_while_a_is_removed(service: &Arc<Service>, dropped: impl Send + 'static) {
    let dropper = thread::spawn(move || drop(dropped));
    let refresher = refreshing(service, 2, &[B]);
    dropper.join().unwrap();
    refresher.join().unwrap();
}

/// A pick starts an attempt while the list is rebuilt with its instance still in it: the new
/// snapshot counts the attempt once, lists the instance once, and counts zero once it ends.
#[test]
fn an_attempt_counts_once_across_a_swap() {
    check(4, || {
        let (service, freed) = Service::new();
        let picker = {
            let service = service.clone();
            thread::spawn(move || service.attempt("a"))
        };
        let refresher = refreshing(&service, 2, &[A, B]);
        let held = picker.join().unwrap();
        refresher.join().unwrap();
        assert_eq!(service.in_flight(), 1, "the attempt lost or doubled");
        assert!(service.published.load().retired.is_empty());
        let listings = held.listings.load(Ordering::Relaxed);
        assert_eq!(listings, 1, "listed by one snapshot");
        drop(held);
        assert_eq!(service.in_flight(), 0);
        assert!(!freed[0].load(Ordering::SeqCst));
    });
}

/// An attempt ends while the list is rebuilt without its instance: the new snapshot counts it
/// at most while it runs (retired, not also listed), and the instance's stats are freed at the
/// next rebuild after it ended, not before.
#[test]
fn a_removed_instance_is_kept_while_an_attempt_holds_it() {
    check(4, || {
        let (service, freed) = Service::new();
        let held = service.attempt("a");
        drop_while_a_is_removed(&service, held);
        assert_eq!(service.in_flight(), 0);
        service.refresh(3, &[B]);
        assert!(service.published.load().retired.is_empty());
        let gone = freed[0].load(Ordering::SeqCst);
        assert!(gone, "stats of a removed instance kept");
        assert!(!freed[1].load(Ordering::SeqCst));
    });
}

/// A removed instance's attempt is in flight at the rebuild while a reader drops the snapshot it
/// picked from (which uncounts its listings): the new snapshot retires the instance and counts
/// the attempt exactly once; once it ends, the next rebuild frees the stats.
#[test]
fn an_attempt_in_flight_keeps_its_instance_counted() {
    check(4, || {
        let (service, freed) = Service::new();
        let held = service.attempt("a");
        drop_while_a_is_removed(&service, service.published.load());
        assert_eq!(service.in_flight(), 1, "the attempt lost or doubled");
        assert!(
            !freed[0].load(Ordering::SeqCst),
            "stats freed under an attempt"
        );
        drop(held);
        service.refresh(3, &[B]);
        assert_eq!(service.in_flight(), 0);
        assert!(freed[0].load(Ordering::SeqCst));
    });
}

/// Two callers find the supplier moved on at once: the new version is built once (a second
/// build, from the snapshot the first replaced, would give the new instance fresh stats and
/// lose the attempts picked from the first), and it lists each instance once.
#[test]
fn concurrent_refreshes_build_a_version_once() {
    check(4, || {
        let (service, _freed) = Service::new();
        let refreshers = [
            refreshing(&service, 2, &[A, B, C]),
            refreshing(&service, 2, &[A, B, C]),
        ];
        for r in refreshers {
            r.join().unwrap();
        }
        let now = service.published.load();
        assert_eq!(now.version, 2);
        assert_eq!(service.builds.load(Ordering::Relaxed), 1, "built twice");
        assert!(now
            .stats
            .iter()
            .all(|s| s.listings.load(Ordering::Relaxed) == 1));
    });
}

/// An attempt to `a` is in flight when the list is rebuilt with `a` on another port under the
/// same id, while a reader drops the snapshot it picked from: the new snapshot lists fresh stats
/// for the changed instance (a listing reused by id alone would carry the old port's latency,
/// ejection and attempts over to the new one), retires the old listing, counts the attempt
/// exactly once, and frees the old stats at the first rebuild after the attempt ends.
#[test]
fn a_changed_instance_starts_afresh_while_its_old_listing_keeps_its_attempt() {
    const MOVED: ServiceInstance = at("a", 2);
    check(4, || {
        let (service, freed) = Service::new();
        let held = service.attempt("a");
        let reader = {
            let snapshot = service.published.load();
            thread::spawn(move || drop(snapshot))
        };
        let refresher = refreshing(&service, 2, &[MOVED, B]);
        reader.join().unwrap();
        refresher.join().unwrap();
        let now = service.published.load();
        let listed = now.stats.iter().find(|s| s.instance.id == "a").unwrap();
        assert_eq!(listed.instance, MOVED);
        assert!(
            !Arc::ptr_eq(&held, &listed.attempt()),
            "the old stats listed for the new port"
        );
        assert_eq!(now.retired.len(), 1, "the old listing not retired");
        drop(now);
        assert_eq!(service.in_flight(), 1, "the attempt lost or doubled");
        drop(held);
        assert_eq!(service.in_flight(), 0);
        service.refresh(3, &[MOVED, B]);
        assert!(service.published.load().retired.is_empty());
        assert!(freed[0].load(Ordering::SeqCst), "the old stats kept");
    });
}
