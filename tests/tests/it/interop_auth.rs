//! Our Eureka client against a real Spring Cloud Netflix Eureka server behind Spring Security's
//! basic auth: without credentials the server refuses it; with them in the service URL it
//! registers, fetches and deregisters. Needs the Java fixtures, so
//! ignored unless asked for (`-- --ignored`, as `.ci/run` runs them).

use std::time::{Duration, Instant};

use feign_eureka::{EurekaClient, InstanceConfig};
use feign_tests::interop::{http_get, JavaApp};

const USER: &str = "eureka";
const PASSWORD: &str = "s3cret-pw";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Java fixtures: run tests/interop/build.sh"]
async fn our_client_works_with_a_real_server_behind_basic_auth() {
    let started =
        tokio::task::spawn_blocking(|| JavaApp::eureka_server_with_basic_auth(USER, PASSWORD, &[]));
    let java = started.await.unwrap().expect("the Java fixtures");
    let plain = java.eureka_url();
    let unauthenticated = tokio::task::spawn_blocking({
        let url = format!("{plain}apps/");
        move || http_get(&url).expect("the server answers").status
    });
    assert_eq!(
        unauthenticated.await.unwrap(),
        401,
        "the server requires the credentials"
    );

    let refused = EurekaClient::builder()
        .service_urls([plain.clone()])
        .enforce_fetch_at_init(true)
        .start()
        .await;
    assert!(
        refused.is_err(),
        "a client without credentials gets no registry"
    );

    let url = plain.replacen("http://", &format!("http://{USER}:{PASSWORD}@"), 1);
    let client = EurekaClient::builder()
        .service_urls([url])
        .instance(
            InstanceConfig::new("secured-svc", 9400)
                .host_name("127.0.0.1")
                .ip_address("127.0.0.1"),
        )
        .registration_jitter(Duration::ZERO)
        .registry_fetch_interval(Duration::from_secs(1))
        .enforce_fetch_at_init(true)
        .start()
        .await
        .expect("the client starts with the credentials of its service URL");
    let deadline = Instant::now() + Duration::from_secs(20);
    while client.instances("secured-svc").is_none() {
        assert!(
            Instant::now() < deadline,
            "our registration never came back in a fetch"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(client.is_registered());
    client.shutdown().await;
    tokio::task::spawn_blocking(move || java.stop())
        .await
        .unwrap();
}
