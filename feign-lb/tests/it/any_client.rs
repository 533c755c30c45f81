//! The balancer for any HTTP call: a hyper-util client behind `LoadBalancedLayer`, and (feature
//! `reqwest-middleware`, which the crate's dev-dependency on itself turns on for its tests) a
//! plain `reqwest::Client` with `LoadBalancedMiddleware`, each calling `http://order-service/...`
//! against real backends on loopback.

use bytes::Bytes;
use feign_lb::{Ejection, LoadBalancedLayer, LoadBalancer, RetryConfig, StaticSupplier};
use feign_test_support::backend::{Backend, Mode};
use feign_test_support::{closed_port_url, error_chain, recording_server};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tower::{Layer, ServiceExt};

const SVC: &str = "order-service";

fn balancer(urls: &[String]) -> LoadBalancer {
    LoadBalancer::builder()
        .supplier(StaticSupplier::new(SVC, urls))
        .ejection(Ejection::disabled())
        .build()
}

/// One of the two forms, over the same balancer.
#[derive(Clone, Copy, Debug)]
enum Form {
    Tower,
    Middleware,
}

const FORMS: &[Form] = &[Form::Tower, Form::Middleware];

/// Sends `method url` through `form` over `lb`: the status and body, or the error's chain
/// with its `Debug`.
async fn send(
    form: Form,
    lb: &LoadBalancer,
    method: &str,
    url: &str,
) -> Result<(u16, String), String> {
    match form {
        Form::Tower => {
            let hyper = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
            let client = LoadBalancedLayer::new(lb.clone()).layer(hyper);
            let request = http::Request::builder()
                .method(method)
                .uri(url)
                .body(Full::new(Bytes::from_static(b"{}")))
                .unwrap();
            match client.oneshot(request).await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let body = response.into_body().collect().await.unwrap().to_bytes();
                    Ok((status, String::from_utf8_lossy(&body).into_owned()))
                }
                Err(e) => Err(format!("{} / {e:?}", error_chain(&*e))),
            }
        }
        Form::Middleware => {
            let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
                .with(feign_lb::LoadBalancedMiddleware::new(lb.clone()))
                .build();
            let method = http::Method::from_bytes(method.as_bytes()).unwrap();
            match client.request(method, url).body("{}").send().await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    Ok((status, response.text().await.unwrap()))
                }
                Err(e) => Err(format!("{} / {e:?}", error_chain(&e))),
            }
        }
    }
}

/// Sends `calls` GETs of `/orders/{id}{query}` to the service through `form`: each answered `ok`.
async fn get_orders(form: Form, lb: &LoadBalancer, calls: u64, query: &str) {
    for id in 0..calls {
        let url = format!("http://{SVC}/orders/{id}{query}");
        let answer = send(form, lb, "GET", &url).await;
        assert_eq!(answer, Ok((200, "ok".into())), "{form:?}: GET {url}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_spread_over_the_instances_with_the_request_path() {
    for &form in FORMS {
        let backends: Vec<Backend> = (0..3).map(|_| Backend::start()).collect();
        let urls: Vec<String> = backends.iter().map(Backend::url).collect();
        let lb = balancer(&urls);
        get_orders(form, &lb, 30, "?full=yes").await;
        for backend in &backends {
            assert_eq!(backend.hits(), 10, "{form:?}: round robin over three");
            let (method, target) = &backend.log()[0];
            assert_eq!(method, "GET");
            assert!(
                target.starts_with("/orders/") && target.ends_with("?full=yes"),
                "{target}"
            );
        }
        let counters = lb.counters(SVC).unwrap();
        assert_eq!(
            counters.success, 30,
            "{form:?}: every attempt reported: {counters:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_instance_is_retried_elsewhere_for_a_get_but_not_for_a_post() {
    for &form in FORMS {
        let good = Backend::start();
        let bad = Backend::start();
        bad.set_mode(Mode::Unavailable);
        let lb = balancer(&[bad.url(), good.url()]);
        get_orders(form, &lb, 6, "").await;
        let (bad_gets, good_gets) = (bad.hits(), good.hits());
        assert!(
            bad_gets >= 1,
            "{form:?}: round robin reached the failing instance"
        );
        assert_eq!(
            good_gets, 6,
            "{form:?}: each GET it failed was retried on the good one"
        );
        assert_eq!(
            lb.counters(SVC).unwrap().retries,
            bad_gets as u64,
            "{form:?}"
        );
        let mut failed = 0;
        for id in 0..6 {
            let url = format!("http://{SVC}/orders/{id}");
            match send(form, &lb, "POST", &url).await.unwrap() {
                (503, _) => failed += 1,
                answer => assert_eq!(answer, (200, "ok".into()), "{form:?}"),
            }
        }
        assert!(failed >= 1, "{form:?}: the 503 comes back to the caller");
        assert_eq!(bad.hits() - bad_gets, failed, "{form:?}");
        assert_eq!(
            good.hits() - good_gets,
            6 - failed,
            "{form:?}: no POST was retried"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_instance_is_retried_elsewhere_and_ejected() {
    for &form in FORMS {
        let mut stopped = Backend::start();
        let good = Backend::start();
        let lb = LoadBalancer::builder()
            .supplier(StaticSupplier::new(SVC, [stopped.url(), good.url()]))
            .build();
        stopped.kill();
        get_orders(form, &lb, 4, "").await;
        // Nothing was sent to a refused connection: a POST is retried too, as feign clients do.
        let url = format!("http://{SVC}/orders");
        assert_eq!(
            send(form, &lb, "POST", &url).await,
            Ok((200, "ok".into())),
            "{form:?}"
        );
        let states = lb.instance_states(SVC);
        assert!(
            states
                .iter()
                .any(|s| s.ejected && s.instance.port() == stopped.addr.port()),
            "{form:?}: the refused instance is ejected at once: {states:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_name_is_an_error_and_an_address_passes_through() {
    for &form in FORMS {
        let backend = Backend::start();
        let lb = balancer(&[backend.url()]);
        let error = send(form, &lb, "GET", "http://billing-service/invoices/1")
            .await
            .unwrap_err();
        assert!(error.contains("billing-service"), "{form:?}: {error}");
        assert!(error.contains("no instance"), "{form:?}: {error}");
        let direct = format!("{}/direct", backend.url());
        assert_eq!(
            send(form, &lb, "GET", &direct).await,
            Ok((200, "ok".into()))
        );
        assert_eq!(backend.log()[0].1, "/direct", "{form:?}");
        assert!(
            lb.counters(SVC).is_none(),
            "{form:?}: the balancer saw no call"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_in_the_url_become_a_header_and_reach_no_error() {
    for &form in FORMS {
        let (base, recorder) = recording_server(feign_test_support::ok).await;
        let lb = balancer(&[base]);
        let url = format!("http://app:s3cret@{SVC}/orders/1");
        assert_eq!(send(form, &lb, "GET", &url).await.unwrap().0, 200);
        let seen = recorder.only();
        assert_eq!(
            seen.header("authorization"),
            Some("Basic YXBwOnMzY3JldA=="),
            "{form:?}"
        );

        let lb = LoadBalancer::builder()
            .supplier(StaticSupplier::new(SVC, [closed_port_url()]))
            .retry(RetryConfig::disabled())
            .build();
        let error = send(form, &lb, "GET", &url).await.unwrap_err();
        assert!(!error.contains("s3cret"), "{form:?}: {error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retry_budget_bounds_retries() {
    for &form in FORMS {
        let backends: Vec<Backend> = (0..3).map(|_| Backend::start()).collect();
        for b in &backends {
            b.set_mode(Mode::Unavailable);
        }
        let urls: Vec<String> = backends.iter().map(Backend::url).collect();
        let lb = LoadBalancer::builder()
            .supplier(StaticSupplier::new(SVC, &urls))
            .retry(
                RetryConfig::new()
                    .max_retries_on_next_instance(2)
                    .budget(feign_lb::RetryBudget::new().percent(0.0).min_per_second(0)),
            )
            .ejection(Ejection::disabled())
            .build();
        for id in 0..10 {
            let url = format!("http://{SVC}/orders/{id}");
            assert_eq!(
                send(form, &lb, "GET", &url).await.unwrap().0,
                503,
                "{form:?}"
            );
        }
        let attempts: usize = backends.iter().map(Backend::hits).sum();
        assert_eq!(attempts, 10, "{form:?}: an empty budget allows no retry");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_dropped_mid_attempt_is_reported_as_discarded() {
    for &form in FORMS {
        let hanging = Backend::start();
        hanging.set_mode(Mode::Hang);
        let lb = balancer(&[hanging.url()]);
        let url = format!("http://{SVC}/orders/1");
        let call = send(form, &lb, "GET", &url);
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(200), call)
                .await
                .is_err(),
            "{form:?}: the backend hangs"
        );
        let counters = lb.counters(SVC).unwrap();
        assert_eq!(counters.discard, 1, "{form:?}: {counters:?}");
        assert_eq!(counters.active, 0, "{form:?}: {counters:?}");
        assert_eq!(hanging.hits(), 1, "{form:?}");
    }
}
