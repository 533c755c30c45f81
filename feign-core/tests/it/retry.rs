//! Retries (case B8 and the retry matrix), resolution through a `Resolver`, and the
//! exactly-one-outcome guarantee towards `CallObserver`s.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use feign_core::__private::{
    self, ClientMeta, Core, FromCore, HttpMethod, MethodMeta, MethodOptions, PathPart,
};
use feign_core::resolve::{AttemptOutcome, CallObserver, ChooseRequest, Chosen, Resolver};
use feign_core::retry::{retry_fn, RetryDecision, RetryPolicy};
use feign_core::{Error, Options, Retryer};
use feign_test_support::{closed_port_url, Captured, NewOrder, OrderClient, Server};
use http::StatusCode;
use tokio::time::Instant;
use tracing::Level;

/// Answers 503 (with an optional `Retry-After`) until `failures` calls have failed, then 200.
fn flaky(failures: usize, retry_after: Option<&'static str>) -> (Router, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let handler = move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            let mut headers = http::HeaderMap::new();
            headers.insert("content-type", "application/json".parse().unwrap());
            if let Some(value) = retry_after {
                headers.insert("retry-after", value.parse().unwrap());
            }
            if n < failures {
                (StatusCode::SERVICE_UNAVAILABLE, headers, "{}".to_owned())
            } else {
                (StatusCode::OK, headers, r#"{"id":1,"item":"a"}"#.to_owned())
            }
        }
    };
    let router = Router::new()
        .route("/api/orders/{id}", get(handler.clone()))
        .route("/api/orders", post(handler));
    (router, calls)
}

/// The in-process router as the transport: no sockets, so the paused clock is exact.
fn in_process(router: Router) -> feign_core::Builder<OrderClient> {
    let service = tower::ServiceExt::map_request(router, |req: http::Request<bytes::Bytes>| {
        req.map(axum::body::Body::from)
    });
    OrderClient::builder()
        .url("http://orders.test")
        .tower_client(service)
}

#[tokio::test(start_paused = true)]
async fn get_is_retried_with_openfeign_backoff_up_to_five_attempts() {
    let (router, calls) = flaky(usize::MAX, None);
    let client = in_process(router)
        .retryer(Retryer::default().jitter(false))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.get_order(&1).await.unwrap_err();
    assert_eq!(err.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(calls.load(Ordering::SeqCst), 5);
    // 100 + 150 + 225 + 337.5 ms, on tokio's millisecond timer wheel.
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_micros(812_500) && waited <= Duration::from_millis(814),
        "{waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn full_jitter_keeps_delays_below_the_backoff() {
    for _ in 0..20 {
        let (router, calls) = flaky(4, None);
        let client = in_process(router).build().unwrap();
        let started = Instant::now();
        client.get_order(&1).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 5);
        assert!(started.elapsed() <= Duration::from_millis(814));
    }
}

#[tokio::test(start_paused = true)]
async fn post_is_not_retried_after_a_response() {
    let (router, calls) = flaky(usize::MAX, Some("1"));
    let client = in_process(router).build().unwrap();
    let err = client
        .create(&NewOrder { item: "a".into() }, "r")
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

static IDEMPOTENT_POST: MethodMeta = MethodMeta {
    key: "OrderService#upsert",
    name: "upsert",
    method: HttpMethod::Post,
    route: "POST /orders",
    path: &[PathPart::Literal("/orders")],
    query: &[],
    headers: &[],
    idempotent: true,
    options: MethodOptions::NONE,
};

#[tokio::test(start_paused = true)]
async fn post_marked_idempotent_is_retried() {
    let (router, calls) = flaky(2, None);
    let client = in_process(router).build().unwrap();
    let core = client.core();
    let mut req = core.request(&IDEMPOTENT_POST);
    req.body_raw("x");
    core.call::<__private::Unit>(req).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured_up_to_the_deadline_and_garbage_ignored() {
    let (router, calls) = flaky(1, Some("2"));
    let client = in_process(router).build().unwrap();
    let started = Instant::now();
    client.get_order(&1).await.unwrap();
    assert_eq!(
        (calls.load(Ordering::SeqCst), started.elapsed()),
        (2, Duration::from_secs(2))
    );

    let (router, calls) = flaky(usize::MAX, Some("999999"));
    let client = in_process(router).build().unwrap();
    let started = Instant::now();
    let err = client.get_order(&1).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(999_999)));
    assert_eq!(
        (calls.load(Ordering::SeqCst), started.elapsed()),
        (1, Duration::ZERO),
        "never waits past the deadline"
    );

    for garbage in ["-1", "banana", "Wed, 21 Oct 2015 07:28:00 GMT"] {
        let (router, calls) = flaky(1, Some(garbage));
        let client = in_process(router)
            .retryer(Retryer::default().jitter(false))
            .build()
            .unwrap();
        let started = Instant::now();
        client.get_order(&1).await.unwrap();
        assert_eq!(
            (calls.load(Ordering::SeqCst), started.elapsed()),
            (2, Duration::from_millis(100)),
            "{garbage}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_total_timeout_covers_every_attempt_and_delay() {
    let (router, calls) = flaky(usize::MAX, None);
    let client = in_process(router)
        .retryer(Retryer::default().jitter(false).max_attempts(100))
        .options(Options::new().total_timeout(Duration::from_millis(400)))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.get_order(&1).await.unwrap_err();
    assert_eq!(
        err.status(),
        Some(StatusCode::SERVICE_UNAVAILABLE),
        "the last error, not a timeout: {err:?}"
    );
    // 100 + 150 = 250 ms; the next delay (225 ms) would pass the deadline.
    assert_eq!(
        (calls.load(Ordering::SeqCst), started.elapsed()),
        (3, Duration::from_millis(250))
    );
}

#[tokio::test]
async fn never_means_one_attempt() {
    let (router, calls) = flaky(usize::MAX, None);
    let server = Server::start(router).await;
    let client = OrderClient::builder()
        .url(server.url())
        .retryer(Retryer::never())
        .build()
        .unwrap();
    client.get_order(&1).await.unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// What a resolver was asked: attempt, instances tried, instance asked for again.
type Asked = (u32, Vec<String>, Option<String>);

/// A resolver over fixed instances that records what it was asked and how attempts ended.
#[derive(Default)]
struct Instances {
    urls: Vec<(&'static str, String)>,
    asked: Mutex<Vec<Asked>>,
    outcomes: Arc<Mutex<Vec<String>>>,
    policy: Option<Arc<dyn RetryPolicy>>,
    empty: bool,
}

struct Observer {
    id: &'static str,
    outcomes: Arc<Mutex<Vec<String>>>,
}

impl CallObserver for Observer {
    fn on_complete(&self, outcome: &AttemptOutcome<'_>, _elapsed: Duration) {
        let shown = match outcome {
            AttemptOutcome::Response(status) => format!("{} {}", self.id, status.as_u16()),
            AttemptOutcome::Failed(err) if err.is_connect() => format!("{} connect", self.id),
            AttemptOutcome::Failed(err) => format!("{} failed {err}", self.id),
            AttemptOutcome::Discarded => format!("{} discarded", self.id),
            _ => format!("{} other", self.id),
        };
        self.outcomes.lock().unwrap().push(shown);
    }
}

impl Resolver for Instances {
    fn choose(&self, request: &ChooseRequest<'_>) -> Result<Chosen, Error> {
        assert_eq!(request.call.service, "order-service");
        let tried: Vec<String> = request.tried.iter().map(|t| t.to_string()).collect();
        self.asked.lock().unwrap().push((
            request.attempt,
            tried.clone(),
            request.same_instance.map(str::to_owned),
        ));
        if self.empty {
            return Err(Error::no_instance(request.call.service, "none registered"));
        }
        let (id, url) = match request.same_instance {
            Some(same) => self.urls.iter().find(|(id, _)| *id == same).unwrap(),
            None => self
                .urls
                .iter()
                .find(|(id, _)| !tried.iter().any(|t| t == id))
                .unwrap_or(&self.urls[0]),
        };
        let observer = Arc::new(Observer {
            id,
            outcomes: self.outcomes.clone(),
        });
        Ok(Chosen::new(url.as_str(), *id).with_observer(observer))
    }

    fn retry_policy(&self, _service: &str) -> Option<Arc<dyn RetryPolicy>> {
        self.policy.clone()
    }
}

#[tokio::test]
async fn connect_refused_post_is_retried_on_the_next_instance() {
    let (router, calls) = flaky(0, None);
    let server = Server::start(router).await;
    let resolver = Arc::new(Instances {
        urls: vec![("down", closed_port_url()), ("up", server.url())],
        ..Instances::default()
    });
    let client = OrderClient::name_only()
        .load_balancer_arc(resolver.clone())
        .build()
        .unwrap();
    client
        .create(&NewOrder { item: "a".into() }, "r")
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        *resolver.asked.lock().unwrap(),
        [(1, vec![], None), (2, vec!["down".to_owned()], None)]
    );
    assert_eq!(
        *resolver.outcomes.lock().unwrap(),
        ["down connect", "up 200"]
    );
}

#[tokio::test]
async fn the_resolvers_retry_policy_applies_unless_the_builder_has_one() {
    let (router, calls) = flaky(usize::MAX, None);
    let server = Server::start(router).await;
    let resolver = Arc::new(Instances {
        urls: vec![("a", server.url())],
        policy: Some(Arc::new(Retryer::never())),
        ..Instances::default()
    });
    let client = OrderClient::name_only()
        .load_balancer_arc(resolver.clone())
        .build()
        .unwrap();
    client.get_order(&1).await.unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let client = OrderClient::name_only()
        .load_balancer_arc(resolver)
        .retryer(
            Retryer::default()
                .period(Duration::from_millis(1))
                .max_attempts(2),
        )
        .build()
        .unwrap();
    client.get_order(&1).await.unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "current_thread")]
async fn a_retryer_set_with_a_balancers_policy_wins_and_build_warns() {
    let (captured, _guard) = Captured::install();
    let warning = "the client's `.retryer(..)` replaces the load balancer's retry policy: \
                   retries follow the retryer, not the balancer's retry settings or budget; \
                   to keep the balancer's, configure retries on the balancer and leave out \
                   `.retryer(..)`";
    let with_policy = Arc::new(Instances {
        urls: vec![("a", closed_port_url())],
        policy: Some(Arc::new(Retryer::never())),
        ..Instances::default()
    });
    OrderClient::name_only()
        .load_balancer_arc(with_policy.clone())
        .build()
        .unwrap();
    OrderClient::name_only()
        .url("http://127.0.0.1:1")
        .retryer(Retryer::default())
        .build()
        .unwrap();
    let without_policy = Arc::new(Instances {
        urls: vec![("a", closed_port_url())],
        ..Instances::default()
    });
    OrderClient::name_only()
        .load_balancer_arc(without_policy)
        .retryer(Retryer::default())
        .build()
        .unwrap();
    assert!(
        captured.matching(Level::WARN, warning).is_empty(),
        "no conflict, no warning: {}",
        captured.text()
    );

    OrderClient::name_only()
        .load_balancer_arc(with_policy)
        .retryer(Retryer::default())
        .build()
        .unwrap();
    let warnings = captured.matching(Level::WARN, warning);
    assert_eq!(warnings.len(), 1, "{}", captured.text());
    assert_eq!(warnings[0].fields["service"], "order-service");
}

#[tokio::test]
async fn same_instance_is_passed_to_the_resolver_when_the_policy_asks() {
    let (router, _) = flaky(1, None);
    let server = Server::start(router).await;
    let resolver = Arc::new(Instances {
        urls: vec![("a", server.url()), ("b", server.url())],
        ..Instances::default()
    });
    let policy = retry_fn(|ctx| {
        if ctx.attempt < 2 {
            RetryDecision::Retry {
                delay: Duration::ZERO,
                same_instance: true,
            }
        } else {
            RetryDecision::Stop
        }
    });
    let client = OrderClient::name_only()
        .load_balancer_arc(resolver.clone())
        .retryer(policy)
        .build()
        .unwrap();
    client.get_order(&1).await.unwrap();
    assert_eq!(
        *resolver.asked.lock().unwrap(),
        [
            (1, vec![], None),
            (2, vec!["a".to_owned()], Some("a".to_owned()))
        ]
    );
    assert_eq!(*resolver.outcomes.lock().unwrap(), ["a 503", "a 200"]);
}

#[tokio::test]
async fn no_instance_is_a_typed_error() {
    let resolver = Instances {
        empty: true,
        ..Instances::default()
    };
    let client = OrderClient::name_only()
        .load_balancer(resolver)
        .build()
        .unwrap();
    let err = client.get_order(&1).await.unwrap_err();
    assert!(err.is_no_instance(), "{err:?}");
    assert!(
        err.to_string()
            .contains("no instance of `order-service`: none registered"),
        "{err}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_reports_discarded_exactly_once() {
    let silent =
        feign_test_support::RawServer::start_with(|_| Vec::new(), Duration::from_secs(3600)).await;
    let resolver = Arc::new(Instances {
        urls: vec![("slow", silent.url())],
        ..Instances::default()
    });
    let client = OrderClient::name_only()
        .load_balancer_arc(resolver.clone())
        .build()
        .unwrap();
    let result = tokio::time::timeout(Duration::from_millis(50), client.get_order(&1)).await;
    assert!(result.is_err(), "the call was cut short");
    assert_eq!(*resolver.outcomes.lock().unwrap(), ["slow discarded"]);
}

/// A generated client for a name-only service is built from the same metadata.
#[derive(Clone, Debug)]
struct Bare {
    core: Core,
}

impl FromCore for Bare {
    fn from_core(core: Core) -> Self {
        Bare { core }
    }
}

static BARE: ClientMeta = ClientMeta {
    trait_name: "Bare",
    service: "bare",
    url: None,
    path: "",
};

#[tokio::test]
async fn a_client_without_path_prefix_calls_the_root() {
    let server = Server::start(Router::new().route("/", get(|| async { "root" }))).await;
    let client: Bare = __private::builder(&BARE)
        .url(format!("{}/", server.url()))
        .build()
        .unwrap();
    static ROOT: MethodMeta = MethodMeta {
        key: "Bare#root",
        name: "root",
        method: HttpMethod::Get,
        route: "GET /",
        path: &[PathPart::Literal("/")],
        query: &[],
        headers: &[],
        idempotent: true,
        options: MethodOptions::NONE,
    };
    let res = client
        .core
        .call::<__private::Text>(client.core.request(&ROOT))
        .await;
    assert_eq!(res.unwrap(), "root");
    assert_eq!(server.targets(), ["/"]);
}

#[tokio::test(start_paused = true)]
async fn post_with_an_idempotency_key_is_retried_with_the_same_key() {
    let (router, calls) = flaky(2, None);
    let server = Server::start(router).await;
    let client = OrderClient::builder().url(server.url()).build().unwrap();
    client
        .create_with_headers(&[("Idempotency-Key", "k-1")])
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    assert!(server
        .recorded()
        .iter()
        .all(|r| r.headers["idempotency-key"] == "k-1"));
}

#[tokio::test(start_paused = true)]
async fn a_budget_refusal_stops_the_call_and_says_so() {
    let (router, calls) = flaky(usize::MAX, None);
    let policy = retry_fn(|ctx| {
        if ctx.attempt < 2 {
            RetryDecision::Retry {
                delay: Duration::ZERO,
                same_instance: false,
            }
        } else {
            RetryDecision::BudgetExhausted
        }
    });
    let client = in_process(router).retryer(policy).build().unwrap();
    let err = client.get_order(&1).await.unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(err.is_retry_budget_exhausted());
    assert_eq!(err.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    assert!(
        err.to_string()
            .ends_with("; not retried: retry budget exhausted"),
        "{err}"
    );

    let (router, _) = flaky(usize::MAX, None);
    let plain = in_process(router).build().unwrap();
    assert!(!plain
        .get_order(&1)
        .await
        .unwrap_err()
        .is_retry_budget_exhausted());
}
