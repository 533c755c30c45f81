//! Case D1: the retry decision matrix, on loopback. Each method, plain or marked idempotent,
//! meets each fault on one of two instances; the fault is retried on the other instance exactly
//! when the table below says so: always when nothing was sent (connection refused), otherwise
//! only for idempotent calls.

use std::time::Duration;

use feign_core::__private::{self, HttpMethod, MethodMeta, MethodOptions, PathPart};
use feign_lb::{Ejection, LoadBalancer, RetryConfig, StaticSupplier};
use feign_test_support::backend::{Backend, Mode, OrderServiceClient};
use feign_test_support::closed_port_url;
use tokio::io::AsyncReadExt;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// Nothing listens: nothing was sent.
    Refused,
    /// The server reads the request and closes the connection without answering.
    ResetAfterSend,
    /// HTTP 503.
    Unavailable,
    /// No answer within the per-try timeout.
    Timeout,
}

/// The checked-in table: is a call of this kind retried on another instance after this fault?
fn expected_retry(method: HttpMethod, marked_idempotent: bool, fault: Fault) -> bool {
    let idempotent = marked_idempotent || method.is_idempotent();
    match fault {
        Fault::Refused => true,
        Fault::ResetAfterSend | Fault::Unavailable | Fault::Timeout => idempotent,
    }
}

/// A server that accepts, reads the request head and closes without a response.
async fn resetting_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                drop(socket);
            });
        }
    });
    format!("http://{addr}")
}

fn meta(method: HttpMethod, idempotent: bool) -> &'static MethodMeta {
    Box::leak(Box::new(MethodMeta {
        key: "OrderService#matrix",
        name: "matrix",
        method,
        route: "ANY /matrix",
        path: &[PathPart::Literal("/matrix")],
        query: &[],
        headers: &[],
        idempotent: idempotent || method.is_idempotent(),
        options: MethodOptions::NONE,
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d1_retry_decisions_match_the_table() {
    let good = Backend::start();
    let unavailable = Backend::start();
    unavailable.set_mode(Mode::Unavailable);
    let hanging = Backend::start();
    hanging.set_mode(Mode::Hang);
    let resetting = resetting_server().await;
    let methods = [
        HttpMethod::Get,
        HttpMethod::Head,
        HttpMethod::Put,
        HttpMethod::Delete,
        HttpMethod::Post,
        HttpMethod::Patch,
    ];
    let mut rows = Vec::new();
    for fault in [
        Fault::Refused,
        Fault::ResetAfterSend,
        Fault::Unavailable,
        Fault::Timeout,
    ] {
        let bad = match fault {
            Fault::Refused => closed_port_url(),
            Fault::ResetAfterSend => resetting.clone(),
            Fault::Unavailable => unavailable.url(),
            Fault::Timeout => hanging.url(),
        };
        for method in methods {
            for marked in [false, true] {
                // Round robin over [bad, good] without ejection: two of four calls start on
                // the bad instance; each of those succeeds only if it was retried.
                let lb = LoadBalancer::builder()
                    .supplier(StaticSupplier::new(
                        "order-service",
                        [bad.clone(), good.url()],
                    ))
                    .ejection(Ejection::disabled())
                    .retry(RetryConfig::new())
                    .build();
                let client: OrderServiceClient =
                    feign_test_support::backend::client(&lb, Duration::from_millis(300));
                let meta = meta(method, marked);
                let mut failures = 0;
                for _ in 0..4 {
                    if call(&client, meta).await.is_err() {
                        failures += 1;
                    }
                }
                let retried = failures == 0;
                assert!(
                    failures == 0 || failures == 2,
                    "{fault:?} {method:?} marked={marked}: {failures} failures"
                );
                rows.push(format!(
                    "{fault:?} {method:?} marked={marked} retried={retried}"
                ));
                assert_eq!(
                    retried,
                    expected_retry(method, marked, fault),
                    "{fault:?} {method:?} marked={marked}"
                );
            }
        }
    }
    assert_eq!(rows.len(), 4 * 6 * 2);
}

/// Sends the method `meta` describes through `client`'s core.
async fn call(
    client: &OrderServiceClient,
    meta: &'static MethodMeta,
) -> Result<(), feign_core::Error> {
    let core = client.core();
    let req = core.request(meta);
    core.call::<__private::Unit>(req).await
}
