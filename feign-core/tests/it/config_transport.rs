//! The transport's part of `Builder::config`: `spring.cloud.openfeign.httpclient.*` and Spring
//! Boot's PEM SSL bundles referenced by a client, against TLS, HTTP/2 and counting servers on
//! loopback; what does not map is an error naming the key.

use axum::Router;
use feign_core::config::Config;
use feign_test_support::server::Server;
use feign_test_support::tls::{serve_h2c, Pki, TlsOptions, TlsServer};
use feign_test_support::{mode_echo, Calls, CallsClient, TempDir};

fn router() -> Router {
    mode_echo()
}

fn yaml(text: &str) -> Config {
    Config::from_yaml_str(text, "application.yml").unwrap()
}

/// The client `text` configures.
fn configured(text: &str) -> CallsClient {
    CallsClient::builder()
        .config(&yaml(text))
        .unwrap()
        .build()
        .unwrap()
}

/// The PKI's files, and a YAML bundle `internal` naming them.
fn bundle(pki: &Pki, dir: &TempDir, identity: bool) -> String {
    let ca = dir.write("ca.pem", &pki.ca);
    let mut text = format!(
        "spring.ssl.bundle.pem.internal:\n  truststore.certificate: file:{}\n  options.enabled-protocols: [TLSv1.2, TLSv1.3]\n",
        ca.display()
    );
    if identity {
        let cert = dir.write("client.pem", &pki.client.cert);
        let key = dir.write("client-key.pem", &pki.client.key);
        text.push_str(&format!(
            "  keystore.certificate: {}\n  keystore.private-key: {}\n",
            cert.display(),
            key.display()
        ));
    }
    text
}

#[tokio::test]
async fn a_client_takes_its_pem_ssl_bundle_for_mutual_tls() {
    let pki = Pki::new();
    let dir = TempDir::new("bundle");
    let server = TlsServer::mutual(router(), &pki).await;
    let text = format!(
        "{}spring.cloud.openfeign.client.config.calls:\n  url: {}\n  ssl-bundle: internal\n",
        bundle(&pki, &dir, true),
        server.url()
    );
    let client = configured(&text);
    assert_eq!(client.call("ok").await.unwrap(), "ok");

    // The trust store alone: the server wants a certificate, so the call fails.
    let dir = TempDir::new("bundle-trust");
    let text = format!(
        "{}spring.cloud.openfeign.httpclient.ssl-bundle: internal\nspring.cloud.openfeign.client.config.calls.url: {}\n",
        bundle(&pki, &dir, false),
        server.url()
    );
    let client = configured(&text);
    assert!(client.call("ok").await.is_err());
}

#[tokio::test]
async fn disable_ssl_validation_accepts_any_certificate() {
    let pki = Pki::new();
    let server = TlsServer::start(router(), &pki, TlsOptions::default()).await;
    let text = format!(
        "spring.cloud.openfeign:\n  httpclient.disable-ssl-validation: true\n  client.config.calls.url: {}\n",
        server.url()
    );
    let client = configured(&text);
    assert_eq!(client.call("ok").await.unwrap(), "ok");
    let checked = CallsClient::builder().url(server.url()).build().unwrap();
    assert!(checked.call("ok").await.is_err());
}

#[tokio::test]
async fn pool_and_protocol_properties_reach_the_transport() {
    let server = Server::start(router()).await;
    let text = format!(
        "spring.cloud.openfeign:\n  httpclient:\n    max-connections-per-route: 0\n    time-to-live: 30\n    time-to-live-unit: SECONDS\n  client.config.calls.url: {}\n",
        server.url()
    );
    let client = configured(&text);
    client.call("a").await.unwrap();
    client.call("b").await.unwrap();
    assert_eq!(server.connection_count(), 2, "no idle connection kept");

    let url = serve_h2c(router()).await;
    let text = format!(
        "spring.cloud.openfeign:\n  httpclient.ok-http.protocols: H2_PRIOR_KNOWLEDGE\n  client.config.calls.url: {url}\n"
    );
    let client = configured(&text);
    assert_eq!(client.call("ok").await.unwrap(), "ok");
}

#[test]
fn what_does_not_map_is_an_error_naming_the_key() {
    let cases = [
        (
            "spring.cloud.openfeign.httpclient.max-connections: many",
            "max-connections",
        ),
        (
            "spring.cloud.openfeign.httpclient.hc5.pool-reuse-policy: RANDOM",
            "hc5.pool-reuse-policy",
        ),
        (
            "spring.cloud.openfeign.httpclient.max-conections-per-route: 5",
            "unknown property",
        ),
        (
            "spring.cloud.openfeign.client.config.calls.ssl-bundle: missing",
            "no SSL bundle `missing`",
        ),
        (
            "spring.cloud.openfeign.client.config.other.ssl-bundle: missing",
            "no SSL bundle `missing`",
        ),
        (
            "spring.ssl.bundle.jks.store.keystore.location: x.p12\nspring.cloud.openfeign.httpclient.ssl-bundle: store",
            "JKS bundle",
        ),
        (
            "spring.ssl.bundle.pem.b.truststore.certificate: classpath:ca.pem\nspring.cloud.openfeign.httpclient.ssl-bundle: b",
            "classpath:",
        ),
        (
            "spring.ssl.bundle.pem.b.options.enabled-protocols: TLSv1.1\nspring.cloud.openfeign.httpclient.ssl-bundle: b",
            "no protocol that can be spoken",
        ),
    ];
    for (text, expected) in cases {
        let error = CallsClient::builder().config(&yaml(text)).unwrap_err();
        assert!(error.is_config(), "{text}: {error:?}");
        let message = error.to_string();
        assert!(message.contains(expected), "{text}: {message}");
    }
    // Apache's and OkHttp's knobs that have nothing to do here are accepted.
    let accepted = "spring.cloud.openfeign.httpclient:\n  hc5.enabled: true\n  connection-timer-repeat: 3000\n  hc5.pool-concurrency-policy: LAX\n  http2.version: HTTP_1_1\n  connection-timeout: 500\n  follow-redirects: true\n";
    let builder = CallsClient::builder().config(&yaml(accepted)).unwrap();
    assert!(builder.url("http://127.0.0.1:1").build().is_ok());
}

#[test]
fn the_readme_sample_binds_and_build_names_the_missing_files() {
    let sample = "spring:
  ssl.bundle.pem.internal:
    truststore.certificate: certs/internal-ca.pem
    keystore: { certificate: certs/client.pem, private-key: certs/client-key.pem }
    options.enabled-protocols: [TLSv1.3]
  cloud.openfeign:
    httpclient:
      max-connections-per-route: 16
      time-to-live: 30
      connection-timeout: 2000
      ok-http.protocols: [HTTP_2, HTTP_1_1]
    client.config.calls.ssl-bundle: internal
";
    let builder = CallsClient::builder().config(&yaml(sample)).unwrap();
    let error = builder.url("https://127.0.0.1:1").build().unwrap_err();
    assert!(error.is_builder(), "{error:?}");
    let text = feign_test_support::error_chain(&error);
    assert!(text.contains("certs/internal-ca.pem"), "{text}");
}

#[test]
fn max_connections_is_accepted_with_a_warning_that_it_does_nothing() {
    let (captured, _guard) = feign_test_support::Captured::install();
    let text = "spring.cloud.openfeign:\n  httpclient.max-connections: 200\n  client.config.calls.url: http://127.0.0.1:1\n";
    configured(text);
    let warned = captured.text();
    assert!(
        warned.contains("WARN")
            && warned.contains("max-connections")
            && warned.contains("no effect"),
        "{warned}"
    );
}
