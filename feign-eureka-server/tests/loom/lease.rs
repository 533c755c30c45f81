//! The lease's expiry arithmetic, sequentially (its atomics are loom's here, so these run as
//! one-thread models).

use feign_eureka::model::InstanceInfo;

use crate::lease::Lease;
use crate::support::check;

fn lease(netflix: bool) -> Lease {
    Lease::new(
        InstanceInfo::new("A", "h", "127.0.0.1", 80),
        30,
        90,
        1_000,
        netflix,
    )
}

#[test]
fn an_unrenewed_lease_expires_after_one_duration() {
    check(0, || {
        let l = lease(true);
        assert!(!l.is_expired(91_000, 0));
        assert!(l.is_expired(91_001, 0));
    });
}

#[test]
fn netflix_mode_expires_two_durations_after_the_last_renewal() {
    check(0, || {
        let l = lease(true);
        l.renew(10_000);
        assert!(!l.is_expired(190_000, 0));
        assert!(l.is_expired(190_001, 0));
        let exact = lease(false);
        exact.renew(10_000);
        assert!(exact.is_expired(100_001, 0));
    });
}

#[test]
fn a_cancelled_lease_is_expired() {
    check(0, || {
        let l = lease(false);
        l.cancel(2_000);
        assert!(l.is_expired(2_000, 0));
    });
}
