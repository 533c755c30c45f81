//! `#[options(...)]` through the macro: per-method timeouts override the client's, against a real
//! loopback server that answers slowly.

use std::time::{Duration, Instant};

use axum::routing::get;
use axum::Router;
use feign_core::{feign_client, Error, Options, Retryer};
use feign_test_support::serve;

#[feign_client("slow-service")]
trait SlowService {
    /// The client's own read timeout applies.
    #[get("/slow")]
    async fn plain(&self) -> Result<String, Error>;

    /// A read timeout of its own, shorter than the server's delay.
    #[get("/slow")]
    #[options(read_timeout_ms = 150)]
    async fn impatient(&self) -> Result<String, Error>;

    /// An overall deadline of its own.
    #[get("/slow")]
    #[options(total_timeout_ms = 150)]
    async fn deadline(&self) -> Result<String, Error>;
}

/// Answers `/slow` after 600 ms.
async fn slow_server() -> String {
    serve(Router::new().route(
        "/slow",
        get(|| async {
            tokio::time::sleep(Duration::from_millis(600)).await;
            "late"
        }),
    ))
    .await
}

#[tokio::test]
async fn method_options_override_the_client_timeouts() {
    let url = slow_server().await;
    let client = SlowServiceClient::builder()
        .url(url)
        .options(Options::new().read_timeout(Duration::from_secs(5)))
        .retryer(Retryer::never())
        .build()
        .unwrap();

    let started = Instant::now();
    assert_eq!(client.plain().await.unwrap(), "late");
    assert!(started.elapsed() >= Duration::from_millis(600));

    for (name, result) in [
        ("read_timeout_ms", {
            let started = Instant::now();
            (client.impatient().await, started.elapsed())
        }),
        ("total_timeout_ms", {
            let started = Instant::now();
            (client.deadline().await, started.elapsed())
        }),
    ] {
        let (result, took) = result;
        let err = result.expect_err(name);
        assert!(err.is_timeout(), "{name}: {err}");
        assert!(
            took < Duration::from_millis(550),
            "{name} fired after {took:?}"
        );
    }
}
