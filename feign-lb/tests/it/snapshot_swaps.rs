//! Concurrency stress test: instance lists swapped (3 → 1 → 0 → 2 ..., each list on ports of
//! its own) while threads pick. Every pick is an instance of a list current during the pick, or
//! a clean "no instance" error while the empty list may have been current; nothing panics,
//! nothing is out of bounds, and in-flight counts return to zero.

use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use feign_core::{AttemptOutcome, ChooseRequest, Resolver};
use feign_lb::{LoadBalancer, Policy, ServiceInstance, StaticSupplier};
use http::{HeaderMap, Method, StatusCode};

/// Rounds of swaps per policy; generation `g` lists ports no other generation lists.
const ROUNDS: u16 = 1_000;

/// Generation `g`'s list: empty every fourth round, otherwise 1 to 3 instances on ports
/// `10 + 4g ..`, disjoint from every other generation's.
fn generation(g: u16) -> Vec<ServiceInstance> {
    let size = [3, 1, 0, 2][usize::from(g % 4)];
    (0..size)
        .map(|i| {
            let port = 10 + 4 * g + i;
            ServiceInstance::new("svc", "127.0.0.1", port).with_metadata("weight", port.to_string())
        })
        .collect()
}

/// The generation whose list holds `port`.
fn generation_of(port: u16) -> u16 {
    (port - 10) / 4
}

/// One pick, its attempt completed at once: the generation of the instance picked, checked to
/// be in that generation's list, or the error.
fn pick(lb: &LoadBalancer) -> Result<u16, feign_core::Error> {
    let headers = HeaderMap::new();
    let chosen = lb.choose(&ChooseRequest::new("svc", "k", &Method::GET, &headers))?;
    let port: u16 = chosen
        .base_url()
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let g = generation_of(port);
    assert!(
        generation(g).iter().any(|i| i.port() == port),
        "{} is in no list",
        chosen.base_url()
    );
    assert!(chosen.is_observed());
    chosen.complete(
        &AttemptOutcome::Response(StatusCode::OK),
        Duration::from_micros(5),
    );
    Ok(g)
}

/// Each generation's instances are disjoint from the others', so a pick tells which list it
/// came from. A pick may come from the balancer's published snapshot even while the supplier
/// has moved on (another thread is rebuilding), but snapshots are only swapped forward: no pick
/// returns a generation older than one a pick returned before it started, nor one not yet
/// published when it ended, and "no instance" comes only while an empty list may have been
/// current; once the swaps stop, picks come from the last list.
///
/// The next list is set only once the swapping thread's own picks met the current one (picked
/// from it, or refused by it when empty), so that a pick overlaps two or three lists, not
/// dozens, and a "no instance" from a list that was not empty cannot hide among them.
#[test]
fn picks_stay_valid_while_snapshots_are_swapped() {
    for policy in Policy::ALL {
        let supplier = StaticSupplier::empty().with_instances("svc", generation(0));
        let lb = LoadBalancer::builder()
            .supplier(supplier.clone())
            .policy(policy)
            .build();
        // The first snapshot is built before the pickers start (concurrent first builds are
        // not ordered).
        assert_eq!(pick(&lb).unwrap(), 0);
        let stop = Arc::new(AtomicBool::new(false));
        // The newest generation announced to the supplier, and the newest a pick returned.
        let published = Arc::new(AtomicU16::new(0));
        let newest_picked = Arc::new(AtomicU16::new(0));
        let pickers: Vec<_> = (0..3)
            .map(|_| {
                let lb = lb.clone();
                let stop = stop.clone();
                let published = published.clone();
                let newest_picked = newest_picked.clone();
                std::thread::spawn(move || {
                    let (mut ok, mut none) = (0u64, 0u64);
                    while !stop.load(Ordering::SeqCst) {
                        let floor = newest_picked.load(Ordering::SeqCst);
                        let result = pick(&lb);
                        let ceiling = published.load(Ordering::SeqCst);
                        match result {
                            Ok(g) => {
                                assert!(
                                    (floor..=ceiling).contains(&g),
                                    "{policy:?}: picked generation {g}, while generations \
                                     {floor}..={ceiling} were current"
                                );
                                newest_picked.fetch_max(g, Ordering::SeqCst);
                                ok += 1;
                            }
                            Err(e) => {
                                assert!(e.is_no_instance(), "{e}");
                                assert!(
                                    (floor..=ceiling).any(|g| generation(g).is_empty()),
                                    "{policy:?}: no instance while generations \
                                     {floor}..={ceiling}, none of them empty, were current"
                                );
                                none += 1;
                            }
                        }
                    }
                    (ok, none)
                })
            })
            .collect();
        for g in 1..ROUNDS {
            // Announced before it is set: no list newer than `published` is ever current.
            published.store(g, Ordering::SeqCst);
            supplier.set("svc", generation(g));
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                assert!(
                    Instant::now() < deadline,
                    "{policy:?}: generation {g} never met"
                );
                match pick(&lb) {
                    Ok(picked) => {
                        newest_picked.fetch_max(picked, Ordering::SeqCst);
                        if picked == g {
                            break;
                        }
                    }
                    Err(e) => {
                        assert!(e.is_no_instance(), "{e}");
                        if generation(g).is_empty() {
                            break;
                        }
                    }
                }
            }
        }
        stop.store(true, Ordering::SeqCst);
        let mut total = 0;
        for picker in pickers {
            let (ok, _none) = picker.join().expect("no picker panicked");
            total += ok;
        }
        assert!(total > 0, "{policy:?}");
        let last = ROUNDS - 1;
        assert!(!generation(last).is_empty());
        assert_eq!(
            pick(&lb).unwrap(),
            last,
            "{policy:?}: the last list is picked"
        );
        let in_flight: u32 = lb.instance_states("svc").iter().map(|s| s.in_flight).sum();
        assert_eq!(in_flight, 0, "{policy:?}");
        assert_eq!(lb.counters("svc").unwrap().active, 0, "{policy:?}");
    }
}
