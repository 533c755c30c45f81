//! The in-flight count across snapshot swaps: an attempt is counted exactly once by the service
//! (neither lost nor doubled when its instance is listed again or retired), every count is back
//! to zero once the attempts end, and a removed instance's stats are freed only once no attempt
//! and no snapshot holds them, at the first rebuild after its last attempt.
//!
//! One thread rebuilds, as in the product (`ServiceLb::refresh` lets one caller rebuild at a
//! time); picks, attempts ending and readers dropping old snapshots race with it.

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread::{self, JoinHandle};

use crate::listed::{self, Listed};
use crate::stats::InstanceStats;
use crate::support::{check, ArcSwap};

/// A snapshot reduced to what the count reads: the listed and the retired instances.
struct Snapshot {
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

/// The published snapshot, listing instances `a` and `b`, and flags set when their stats are
/// freed.
fn published() -> (Arc<ArcSwap<Snapshot>>, [Arc<AtomicBool>; 2]) {
    let freed = [(); 2].map(|_| Arc::new(AtomicBool::new(false)));
    let stats = ["a", "b"]
        .iter()
        .zip(&freed)
        .map(|(id, freed)| Listed::new(Arc::new(InstanceStats::new(id, freed.clone()))))
        .collect();
    let snapshot = Snapshot {
        stats,
        retired: Vec::new(),
    };
    (Arc::new(ArcSwap::from_pointee(snapshot)), freed)
}

/// Rebuilds the published snapshot with the instances `keep`, as `Snapshot::build` does: each
/// one still listed keeps its listing, the others with attempts in flight are retired.
fn rebuild(published: &ArcSwap<Snapshot>, keep: &[&str]) {
    let current = published.load();
    let stats: Vec<Listed> = current
        .stats
        .iter()
        .filter(|s| keep.contains(&s.id))
        .cloned()
        .collect();
    let listed_again = |s: &Listed| stats.iter().any(|kept| kept.same(s));
    let retired = listed::retire(current.stats.iter().chain(&current.retired), listed_again);
    drop(current);
    published.store(Arc::new(Snapshot { stats, retired }));
}

/// A thread rebuilding the published snapshot with the instances `keep`.
fn rebuilding(published: &Arc<ArcSwap<Snapshot>>, keep: &'static [&str]) -> JoinHandle<()> {
    let published = published.clone();
    thread::spawn(move || rebuild(&published, keep))
}

/// Drops `dropped` on one thread while another rebuilds the list without `a`.
fn drop_while_a_is_removed(published: &Arc<ArcSwap<Snapshot>>, dropped: impl Send + 'static) {
    let dropper = thread::spawn(move || drop(dropped));
    let rebuilder = rebuilding(published, &["b"]);
    dropper.join().unwrap();
    rebuilder.join().unwrap();
}

/// An attempt to `id`, picked from the published snapshot.
fn attempt(published: &ArcSwap<Snapshot>, id: &str) -> Arc<InstanceStats> {
    let snapshot = published.load();
    let listed = snapshot.stats.iter().find(|s| s.id == id).expect("listed");
    listed.attempt()
}

/// A pick starts an attempt while the list is rebuilt with its instance still in it: the new
/// snapshot counts the attempt once, lists the instance once, and counts zero once it ends.
#[test]
fn an_attempt_counts_once_across_a_swap() {
    check(4, || {
        let (published, freed) = published();
        let picker = {
            let published = published.clone();
            thread::spawn(move || attempt(&published, "a"))
        };
        let rebuilder = rebuilding(&published, &["a", "b"]);
        let held = picker.join().unwrap();
        rebuilder.join().unwrap();
        let now = published.load();
        assert_eq!(now.in_flight(), 1, "the attempt lost or doubled");
        assert!(now.retired.is_empty());
        assert_eq!(
            held.listings.load(Ordering::Relaxed),
            1,
            "listings: one snapshot"
        );
        drop(held);
        assert_eq!(now.in_flight(), 0);
        assert!(!freed[0].load(Ordering::SeqCst));
    });
}

/// An attempt ends while the list is rebuilt without its instance: the new snapshot counts it
/// at most while it runs (retired, not also listed), and the instance's stats are freed at the
/// next rebuild after it ended, not before.
#[test]
fn a_removed_instance_is_kept_while_an_attempt_holds_it() {
    check(4, || {
        let (published, freed) = published();
        let held = attempt(&published, "a");
        drop_while_a_is_removed(&published, held);
        assert_eq!(published.load().in_flight(), 0);
        rebuild(&published, &["b"]);
        assert!(published.load().retired.is_empty());
        assert!(
            freed[0].load(Ordering::SeqCst),
            "stats of a removed instance kept"
        );
        assert!(!freed[1].load(Ordering::SeqCst));
    });
}

/// A removed instance's attempt is in flight at the rebuild while a reader drops the snapshot it
/// picked from (which uncounts its listings): the new snapshot retires the instance and counts
/// the attempt exactly once; once it ends, the next rebuild frees the stats.
#[test]
fn an_attempt_in_flight_keeps_its_instance_counted() {
    check(4, || {
        let (published, freed) = published();
        let held = attempt(&published, "a");
        drop_while_a_is_removed(&published, published.load());
        assert_eq!(
            published.load().in_flight(),
            1,
            "the attempt lost or doubled"
        );
        assert!(
            !freed[0].load(Ordering::SeqCst),
            "stats freed under an attempt"
        );
        drop(held);
        rebuild(&published, &["b"]);
        assert_eq!(published.load().in_flight(), 0);
        assert!(freed[0].load(Ordering::SeqCst));
    });
}
