//! How long a dead instance keeps getting traffic: calls paced at a fixed rate through the
//! balancer, one of four backends fails, and every pick is timed by a lifecycle hook. A crashed
//! instance (connection refused) leaves rotation after one failed attempt, and a failing one
//! (503) after five in a row: both within a second of the fault, with no error for the caller.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use feign_lb::{LifecycleHook, LoadBalancer, ServiceInstance, StaticSupplier};
use feign_test_support::backend::{client, Backend, Mode};

const SVC: &str = "order-service";

/// When each pick went to which port.
#[derive(Default, Clone)]
struct Picks(Arc<Mutex<Vec<(Instant, u16)>>>);

impl LifecycleHook for Picks {
    fn on_start_request(&self, _service: &str, instance: &ServiceInstance) {
        self.0
            .lock()
            .unwrap()
            .push((Instant::now(), instance.port()));
    }
}

/// What the run saw of the victim after its fault.
struct Aftermath {
    /// Picks of the victim after the fault.
    picks: usize,
    /// From the fault to the last pick of the victim.
    last_pick: Duration,
    /// Errors the callers saw.
    errors: Vec<String>,
}

/// Calls at `rate` per second for `run`, each on its own task (open loop); at `fault_at`,
/// `fault` hits the first backend.
async fn paced_run(
    rate: u32,
    run: Duration,
    fault_at: Duration,
    fault: impl FnOnce(&mut Backend),
) -> Aftermath {
    let mut backends: Vec<Backend> = (0..4).map(|_| Backend::start()).collect();
    let urls: Vec<String> = backends.iter().map(Backend::url).collect();
    let picks = Picks::default();
    let lb = LoadBalancer::builder()
        .supplier(StaticSupplier::new(SVC, &urls))
        .lifecycle(picks.clone())
        .build();
    let orders = client(&lb, Duration::from_secs(2));
    let victim = backends[0].addr.port();

    let started = tokio::time::Instant::now();
    let period = Duration::from_secs(1) / rate;
    let calls = (run.as_secs_f64() * f64::from(rate)) as u32;
    let fault_call = (fault_at.as_secs_f64() * f64::from(rate)) as u32;
    let mut fault = Some(fault);
    let mut fault_time = None;
    let mut tasks = Vec::new();
    for n in 0..calls {
        tokio::time::sleep_until(started + period * n).await;
        if n == fault_call {
            let fault = fault.take().unwrap();
            tokio::task::block_in_place(|| fault(&mut backends[0]));
            fault_time = Some(Instant::now());
        }
        let orders = orders.clone();
        tasks.push(tokio::spawn(
            async move { orders.get_order(u64::from(n)).await },
        ));
    }
    let mut errors = Vec::new();
    for task in tasks {
        if let Err(error) = task.await.unwrap() {
            errors.push(error.to_string());
        }
    }
    let fault_time = fault_time.expect("the fault ran");
    let picks = picks.0.lock().unwrap();
    let after: Vec<Instant> = picks
        .iter()
        .filter(|(at, port)| *port == victim && *at >= fault_time)
        .map(|(at, _)| *at)
        .collect();
    Aftermath {
        picks: after.len(),
        last_pick: after
            .last()
            .map_or(Duration::ZERO, |at| at.duration_since(fault_time)),
        errors,
    }
}

impl Aftermath {
    /// No caller saw an error, and the victim got at most `max_picks` attempts, the last one
    /// within a second of the fault.
    fn assert_out_within_a_second(&self, max_picks: usize, why: &str) {
        assert!(self.errors.is_empty(), "{:?}", self.errors);
        assert!(self.picks <= max_picks, "{why}: {} picks", self.picks);
        assert!(
            self.last_pick < Duration::from_secs(1),
            "last pick {:?} after the fault",
            self.last_pick
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_instance_gets_no_traffic_a_second_after_at_ten_calls_a_second() {
    let crash_at = Duration::from_secs(1);
    paced_run(10, Duration::from_secs(4), crash_at, Backend::kill)
        .await
        .assert_out_within_a_second(1, "one refused connection ejects it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_answering_503_gets_no_traffic_a_second_after_at_forty_calls_a_second() {
    let fail_at = Duration::from_secs(1);
    paced_run(40, Duration::from_secs(3), fail_at, |backend| {
        backend.set_mode(Mode::Unavailable);
    })
    .await
    .assert_out_within_a_second(5, "five 503s in a row eject it");
}
