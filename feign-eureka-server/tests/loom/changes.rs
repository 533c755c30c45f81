//! One stored lease under concurrent renewals, changes and a cancellation: a cancelled lease
//! stays cancelled (expired, its instance `DELETED`, whatever a renewal or an administrative
//! change that found it before does), no change is lost to a concurrent one, and every change
//! that lands has one delta entry, there as soon as the change can be seen.

use feign_eureka::model::{ActionType, InstanceInfo, InstanceStatus};
use loom::sync::Arc;
use loom::thread::{self, JoinHandle};

use crate::delta::DeltaQueue;
use crate::lease::Lease;
use crate::record;
use crate::support::check;

/// A registered lease and the queue holding its registration.
fn registered() -> (Arc<Lease>, Arc<DeltaQueue>) {
    let mut info = InstanceInfo::new("A", "h", "127.0.0.1", 80);
    record::set_status(&mut info, InstanceStatus::Up);
    record::set_action(&mut info, ActionType::Added);
    let lease = Arc::new(Lease::new(info, 30, 90, 1_000, false));
    let delta = Arc::new(DeltaQueue::default());
    delta.push(1_000, lease.clone());
    (lease, delta)
}

/// An administrative change, as `Registry::modified` makes one: metadata `key` set, recorded.
fn modify(delta: &Arc<DeltaQueue>, lease: &Arc<Lease>, key: &'static str) -> JoinHandle<bool> {
    let (delta, lease) = (delta.clone(), lease.clone());
    thread::spawn(move || {
        let made = delta.change(2_000, &lease, |current| {
            let mut changed = InstanceInfo::clone(current);
            record::merge_metadata(&mut changed, &[(key.to_owned(), "set".to_owned())]);
            record::set_action(&mut changed, ActionType::Modified);
            changed
        });
        made.is_some()
    })
}

/// A renewal that also corrects the stored status, as `Registry::renew` does under an override.
fn renew(lease: &Arc<Lease>) -> JoinHandle<()> {
    let lease = lease.clone();
    thread::spawn(move || {
        lease.change(|current| {
            let mut changed = InstanceInfo::clone(current);
            record::set_status(&mut changed, InstanceStatus::OutOfService);
            changed
        });
        lease.renew(2_000);
    })
}

/// The queued entries' places that hold `lease`.
fn entries(delta: &DeltaQueue, lease: &Arc<Lease>) -> usize {
    delta
        .leases()
        .iter()
        .filter(|l| Arc::ptr_eq(l, lease))
        .count()
}

/// A renewal and an administrative change that found the lease race its cancellation: the
/// lease ends cancelled and `DELETED`; the change has its entry only if it landed, and then
/// before the cancellation's.
#[test]
fn a_cancelled_lease_stays_deleted() {
    check(3, || {
        let (lease, delta) = registered();
        let renewal = renew(&lease);
        let change = modify(&delta, &lease, "k");
        let gone = delta.cancel(3_000, &lease);
        renewal.join().unwrap();
        let changed = change.join().unwrap();

        let stored = lease.load();
        assert_eq!(stored.action_type, Some(ActionType::Deleted), "revived");
        assert!(Arc::ptr_eq(&stored, &gone));
        assert!(lease.is_expired(2_000, 0));
        // The registration, the change if it landed (before the cancellation, which then
        // carries it over), and the cancellation.
        assert_eq!(entries(&delta, &lease), 2 + usize::from(changed));
        assert_eq!(gone.metadata.contains_key("k"), changed);
    });
}

/// Two administrative changes and a renewal's status fix at once: all land, each change with
/// its entry, none undoing another; a reader meanwhile never sees a change before its entry.
#[test]
fn concurrent_changes_are_all_kept() {
    check(2, || {
        let (lease, delta) = registered();
        let renewal = renew(&lease);
        let changes = [modify(&delta, &lease, "a"), modify(&delta, &lease, "b")];
        let seen = lease.load();
        let landed = ["a", "b"]
            .iter()
            .filter(|k| seen.metadata.contains_key(**k))
            .count();
        assert!(
            entries(&delta, &lease) > landed,
            "a change seen before its entry"
        );
        for change in changes {
            assert!(change.join().unwrap());
        }
        renewal.join().unwrap();
        let stored = lease.load();
        assert!(stored.metadata.contains_key("a") && stored.metadata.contains_key("b"));
        assert_eq!(
            stored.status,
            InstanceStatus::OutOfService,
            "the renewal's fix lost"
        );
        assert_eq!(entries(&delta, &lease), 3);
    });
}
