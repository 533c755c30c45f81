//! feign-eureka's integration tests, one binary: the client against Eureka-speaking servers
//! on 127.0.0.1 (`feign_test_support::eureka::FakeEureka`, and the embedded registry of
//! `feign_eureka_server` where a registry's own answers matter), and the wire model against
//! golden documents.

#[cfg(feature = "config")]
mod config;
mod config_spring;
mod deadline;
mod discovery;
mod health;
mod metrics;
mod model;
mod model_props;
mod model_xml_props;
mod outage;
mod registration;
mod runtime_metadata;
mod server_tries;
mod shutdown;
mod single_vip;
mod transport;
mod watch;

/// The embedded registry on a free loopback port, answering reads without its read-only cache
/// (changes show at once).
async fn embedded_registry() -> feign_eureka_server::EurekaServer {
    feign_eureka_server::EurekaServer::builder()
        .bind("127.0.0.1:0")
        .read_only_cache(false)
        .start()
        .await
        .expect("the embedded registry starts")
}
