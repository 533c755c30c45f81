//! Concurrency stress test: instance lists swapped (3 → 1 → 0 → 3 ...) while threads pick.
//! Every pick is an instance of some published list or a clean "no instance" error; nothing
//! panics, nothing is out of bounds, and in-flight counts return to zero.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use feign_core::{AttemptOutcome, ChooseRequest, Resolver};
use feign_lb::{LoadBalancer, Policy, ServiceInstance, StaticSupplier};
use http::{HeaderMap, Method, StatusCode};

fn list(ports: &[u16]) -> Vec<ServiceInstance> {
    ports
        .iter()
        .map(|&p| {
            ServiceInstance::new("svc", "127.0.0.1", p).with_metadata("weight", p.to_string())
        })
        .collect()
}

#[test]
fn picks_stay_valid_while_snapshots_are_swapped() {
    for policy in Policy::ALL {
        let supplier = StaticSupplier::empty().with_instances("svc", list(&[1, 2, 3]));
        let lb = LoadBalancer::builder()
            .supplier(supplier.clone())
            .policy(policy)
            .build();
        let stop = Arc::new(AtomicBool::new(false));
        let pickers: Vec<_> = (0..3)
            .map(|_| {
                let lb = lb.clone();
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let headers = HeaderMap::new();
                    let (mut ok, mut none) = (0u64, 0u64);
                    while !stop.load(Ordering::Relaxed) {
                        let req = ChooseRequest::new("svc", "k", &Method::GET, &headers);
                        match lb.choose(&req) {
                            Ok(chosen) => {
                                let port: u16 = chosen
                                    .base_url()
                                    .rsplit(':')
                                    .next()
                                    .unwrap()
                                    .parse()
                                    .unwrap();
                                assert!((1..=3).contains(&port), "{}", chosen.base_url());
                                let outcome = AttemptOutcome::Response(StatusCode::OK);
                                assert!(chosen.is_observed());
                                chosen.complete(&outcome, Duration::from_micros(5));
                                ok += 1;
                            }
                            Err(e) => {
                                assert!(e.is_no_instance(), "{e}");
                                none += 1;
                            }
                        }
                    }
                    (ok, none)
                })
            })
            .collect();
        for round in 0..2_000 {
            match round % 4 {
                0 => supplier.set("svc", list(&[1, 2, 3])),
                1 => supplier.set("svc", list(&[2])),
                2 => supplier.set("svc", list(&[])),
                _ => supplier.set("svc", list(&[3, 1])),
            }
            if round % 100 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        stop.store(true, Ordering::Relaxed);
        let mut total = 0;
        for picker in pickers {
            let (ok, _none) = picker.join().expect("no picker panicked");
            total += ok;
        }
        assert!(total > 0, "{policy:?}");
        supplier.set("svc", list(&[1, 2, 3]));
        let in_flight: u32 = lb.instance_states("svc").iter().map(|s| s.in_flight).sum();
        assert_eq!(in_flight, 0, "{policy:?}");
        assert_eq!(lb.counters("svc").unwrap().active, 0, "{policy:?}");
    }
}
