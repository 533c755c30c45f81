//! The built-in transport's TLS, proxies, pool and HTTP version, against real servers on
//! loopback: an HTTPS server with a CA made here (requiring a client certificate or not), a
//! recording forward proxy, an HTTP/2-only server, and a server that counts connections.

use std::time::Duration;

use axum::routing::get;
use axum::Router;
use feign_core::{HttpProtocol, Proxy, Tls, TlsVersion};
use feign_test_support::proxy::ForwardProxy;
use feign_test_support::server::Server;
use feign_test_support::tls::{serve_h2c, Pki, TlsOptions, TlsServer};
use feign_test_support::{
    calls_service, error_chain, mode_echo, Calls, CallsClient, Captured, TempDir,
};

/// `/calls/{mode}` answering the mode, as `calls_service` does; `/moved` redirects there.
fn router() -> Router {
    mode_echo().route(
        "/moved",
        get(|| async { axum::response::Redirect::to("/calls/moved") }),
    )
}

/// A method with options of its own gets a reqwest client of its own: the TLS settings must
/// reach it too.
#[feign_core::feign_client("own-options")]
trait OwnOptions {
    #[get("/moved")]
    #[options(connect_timeout_ms = 3000, follow_redirects = true)]
    async fn moved(&self) -> Result<String, feign_core::Error>;
}

async fn https(pki: &Pki, options: TlsOptions) -> TlsServer {
    TlsServer::start(router(), pki, options).await
}

/// An HTTPS server that requires a client certificate of `pki`'s CA.
async fn mtls_server(pki: &Pki) -> TlsServer {
    TlsServer::mutual(router(), pki).await
}

/// Trusts `pki`'s CA and shows its client certificate.
fn mutual(pki: &Pki) -> Tls {
    Tls::new()
        .ca_pem(pki.ca.clone())
        .identity_pem(pki.client.cert.clone(), pki.client.key.clone())
}

#[tokio::test]
async fn a_client_trusting_the_ca_calls_over_https_and_an_unknown_ca_is_refused() {
    let pki = Pki::new();
    let server = https(&pki, TlsOptions::default()).await;
    let trusted = CallsClient::builder()
        .url(server.url())
        .tls(Tls::new().ca_pem(pki.ca.clone()))
        .build()
        .unwrap();
    assert_eq!(trusted.call("ok").await.unwrap(), "ok");

    // The public roots only, then another CA: both refuse the server's certificate.
    let other = Pki::new();
    for tls in [Tls::new(), Tls::new().ca_pem(other.ca.clone())] {
        let client = CallsClient::builder()
            .url(server.url())
            .tls(tls)
            .build()
            .unwrap();
        let error = client.call("ok").await.unwrap_err();
        assert!(error.is_connect(), "{error:?}");
        let text = error_chain(&error);
        assert!(
            text.contains("certificate"),
            "the reason names the certificate: {text}"
        );
    }
    assert!(
        server.refused() >= 2,
        "the handshakes failed, nothing was served"
    );
}

#[tokio::test]
async fn a_method_with_its_own_connect_timeout_and_redirects_keeps_the_tls_settings() {
    let pki = Pki::new();
    let server = mtls_server(&pki).await;
    let client = OwnOptionsClient::builder()
        .url(server.url())
        .tls(mutual(&pki))
        .build()
        .unwrap();
    assert_eq!(client.moved().await.unwrap(), "moved", "redirect followed");
}

#[tokio::test]
async fn a_server_requiring_a_client_certificate_accepts_ours_and_refuses_none() {
    let pki = Pki::new();
    let server = mtls_server(&pki).await;
    let with_identity = CallsClient::builder()
        .url(server.url())
        .tls(mutual(&pki))
        .build()
        .unwrap();
    assert_eq!(with_identity.call("ok").await.unwrap(), "ok");

    // Without a certificate, and with one from a CA the server does not know: no HTTP answer,
    // the handshake refused, and the client told why.
    let stranger = Pki::with_ca_name("stranger CA");
    let refusals = [
        (Tls::new().ca_pem(pki.ca.clone()), "CertificateRequired"),
        (
            Tls::new()
                .ca_pem(pki.ca.clone())
                .identity_pem(stranger.client.cert.clone(), stranger.client.key.clone()),
            "UnknownCA",
        ),
    ];
    for (tls, alert) in refusals {
        let client = CallsClient::builder()
            .url(server.url())
            .tls(tls)
            .retryer(feign_core::Retryer::never())
            .build()
            .unwrap();
        let error = client.call("ok").await.unwrap_err();
        assert!(!error.is_status(), "no HTTP answer: {error:?}");
        let text = error_chain(&error);
        assert!(
            text.contains(&format!("received fatal alert: {alert}")),
            "the client is told {alert}: {text}"
        );
    }
    assert_eq!(server.refused(), 2, "both handshakes refused by the server");
}

#[tokio::test]
async fn identity_and_ca_files_are_read_at_build_and_their_mistakes_are_build_errors() {
    let pki = Pki::new();
    let other = Pki::new();
    let dir = TempDir::new("feign-tls");
    let write = |name: &str, text: &str| dir.write(name, text);
    let ca = write("ca.pem", &pki.ca);
    let cert = write("client.pem", &pki.client.cert);
    let key = write("client-key.pem", &pki.client.key);
    let wrong_key = write("other-key.pem", &other.client.key);
    let encrypted = write(
        "encrypted.pem",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n",
    );
    let garbage = write("garbage.pem", "not PEM at all");
    let missing = dir.0.join("missing.pem");

    let server = mtls_server(&pki).await;
    let client = CallsClient::builder()
        .url(server.url())
        .tls(Tls::new().ca_file(&ca).identity_files(&cert, &key))
        .build()
        .unwrap();
    assert_eq!(client.call("ok").await.unwrap(), "ok");

    let refused = |tls: Tls| {
        let error = CallsClient::builder()
            .url(server.url())
            .tls(tls)
            .build()
            .expect_err("refused at build");
        assert!(error.is_builder(), "{error:?}");
        error_chain(&error)
    };
    let text = refused(Tls::new().identity_files(&cert, &wrong_key));
    assert!(text.contains("does not match"), "{text}");
    assert!(
        !text.contains("PRIVATE KEY-----"),
        "no key material: {text}"
    );
    let text = refused(Tls::new().ca_file(&missing));
    assert!(
        text.contains("cannot read") && text.contains("missing.pem"),
        "{text}"
    );
    let text = refused(Tls::new().ca_file(&garbage));
    assert!(
        text.contains("no certificate") && text.contains("garbage.pem"),
        "{text}"
    );
    let text = refused(Tls::new().identity_files(&cert, &garbage));
    assert!(text.contains("no readable private key"), "{text}");
    let text = refused(Tls::new().identity_files(&cert, &encrypted));
    assert!(
        text.contains("encrypted") && text.contains("password"),
        "{text}"
    );
    let sealed = write("sealed-key.pem", &pki.encrypted_client_key("open sesame"));
    let text = refused(
        Tls::new()
            .identity_files(&cert, &sealed)
            .key_password("wrong"),
    );
    assert!(
        text.contains("cannot decrypt") && text.contains("wrong password"),
        "{text}"
    );
    assert!(!text.contains("open sesame"), "{text}");
    let text = refused(Tls::new().identity_files(&cert, &sealed));
    assert!(text.contains("is encrypted"), "{text}");
    // The right password: the server takes the decrypted identity.
    let client = CallsClient::builder()
        .url(server.url())
        .tls(
            Tls::new()
                .ca_file(&ca)
                .identity_files(&cert, &sealed)
                .key_password("open sesame"),
        )
        .build()
        .unwrap();
    assert_eq!(client.call("ok").await.unwrap(), "ok");
    let shown = format!("{:?}", Tls::new().key_password("open sesame"));
    assert!(!shown.contains("open sesame"), "{shown}");
    let text = refused(
        Tls::new()
            .min_version(TlsVersion::Tls13)
            .max_version(TlsVersion::Tls12),
    );
    assert!(text.contains("minimum"), "{text}");
    let shown = format!(
        "{:?}",
        CallsClient::builder()
            .tls(Tls::new().identity_pem(pki.client.cert.clone(), pki.client.key.clone()))
    );
    assert!(
        !shown.contains("PRIVATE KEY"),
        "Debug shows no key: {shown}"
    );
}

#[tokio::test]
async fn a_minimum_version_above_the_servers_fails_the_handshake() {
    let pki = Pki::new();
    let server = https(
        &pki,
        TlsOptions {
            tls12_only: true,
            ..TlsOptions::default()
        },
    )
    .await;
    let tls12 = CallsClient::builder()
        .url(server.url())
        .tls(Tls::new().ca_pem(pki.ca.clone()))
        .build()
        .unwrap();
    assert_eq!(tls12.call("ok").await.unwrap(), "ok");
    let tls13 = CallsClient::builder()
        .url(server.url())
        .tls(
            Tls::new()
                .ca_pem(pki.ca.clone())
                .min_version(TlsVersion::Tls13),
        )
        .build()
        .unwrap();
    let error = tls13.call("ok").await.unwrap_err();
    assert!(error.is_connect(), "{error:?}");
}

#[tokio::test]
async fn turning_certificate_checks_off_takes_the_loud_opt_in_and_logs_a_warning() {
    let pki = Pki::new();
    let server = https(&pki, TlsOptions::default()).await;
    let (captured, _guard) = Captured::install();
    let client = CallsClient::builder()
        .url(server.url())
        .tls(Tls::new().danger_accept_invalid_certs(true))
        .build()
        .unwrap();
    let warned = captured.text();
    assert!(
        warned.contains("WARN") && warned.contains("certificate checks are OFF"),
        "{warned}"
    );
    assert_eq!(client.call("ok").await.unwrap(), "ok");
}

#[tokio::test]
async fn plain_http_goes_through_the_proxy_with_its_credentials_never_shown() {
    let (url, service) = calls_service().await;
    let expected = "Basic YXBwOnMzY3JldA=="; // app:s3cret
    let proxy = ForwardProxy::start(Some(expected.to_owned())).await;
    let proxied = format!("http://app:s3cret@{}", proxy.addr);
    let builder = CallsClient::builder()
        .url(&url)
        .proxy(Proxy::http(&proxied));
    let shown = format!("{builder:?}");
    assert!(
        !shown.contains("s3cret") && shown.contains("app"),
        "{shown}"
    );
    let client = builder.build().unwrap();
    assert_eq!(client.call("ok").await.unwrap(), "ok");
    let seen = proxy.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].target, format!("{url}/calls/ok"), "absolute form");
    assert_eq!(seen[0].authorization.as_deref(), Some(expected));
    assert_eq!(service.requests(), 1);

    // A wrong password: the proxy answers 407, and the password is in no error.
    let wrong = CallsClient::builder()
        .url(&url)
        .proxy(Proxy::http(proxy.url()).basic_auth("app", "wr0ng-pw"))
        .build()
        .unwrap();
    let error = wrong.call("ok").await.unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(407), "{error:?}");
    let text = format!("{} {error:?}", error_chain(&error));
    assert!(!text.contains("wr0ng-pw"), "{text}");

    // A host on the no-proxy list is called directly.
    let direct = CallsClient::builder()
        .url(&url)
        .proxy(Proxy::all(proxy.url()).no_proxy("localhost,127.0.0.1"))
        .build()
        .unwrap();
    assert_eq!(direct.call("ok").await.unwrap(), "ok");
    assert_eq!(proxy.seen().len(), 2, "the direct call skipped the proxy");
    assert_eq!(service.requests(), 2);

    // A bad proxy URL fails the build, without its password.
    let error = CallsClient::builder()
        .url(&url)
        .proxy(Proxy::all("ftp://app:s3cret@127.0.0.1:1"))
        .build()
        .unwrap_err();
    assert!(error.is_builder(), "{error:?}");
    assert!(!error_chain(&error).contains("s3cret"), "{error}");
}

#[tokio::test]
async fn https_goes_through_the_proxy_in_a_connect_tunnel() {
    let pki = Pki::new();
    let server = https(&pki, TlsOptions::default()).await;
    let proxy = ForwardProxy::start(None).await;
    let client = CallsClient::builder()
        .url(server.url())
        .tls(Tls::new().ca_pem(pki.ca.clone()))
        .proxy(Proxy::https(proxy.url()))
        .build()
        .unwrap();
    assert_eq!(client.call("ok").await.unwrap(), "ok");
    let seen = proxy.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].method, http::Method::CONNECT);
    assert_eq!(seen[0].target, server.addr.to_string());
}

#[tokio::test]
async fn an_https_proxy_is_reached_over_tls_with_the_clients_roots() {
    let (url, service) = calls_service().await;
    let pki = Pki::new();
    let proxy = ForwardProxy::start_tls(None, &pki).await;
    let proxy_url = format!("https://localhost:{}", proxy.addr.port());
    let trusting = CallsClient::builder()
        .url(&url)
        .tls(Tls::new().ca_pem(pki.ca.clone()))
        .proxy(Proxy::http(&proxy_url))
        .build()
        .unwrap();
    assert_eq!(trusting.call("ok").await.unwrap(), "ok");
    assert_eq!(proxy.seen().len(), 1);
    assert_eq!(service.requests(), 1);

    let not_trusting = CallsClient::builder()
        .url(&url)
        .proxy(Proxy::http(&proxy_url))
        .build()
        .unwrap();
    assert!(
        not_trusting.call("ok").await.is_err(),
        "the proxy's certificate is checked"
    );
    assert_eq!(proxy.seen().len(), 1, "nothing reached the proxy");
}

#[tokio::test]
async fn http2_with_prior_knowledge_talks_to_an_h2c_server() {
    let url = serve_h2c(router()).await;
    let h2 = CallsClient::builder()
        .url(&url)
        .http_protocol(HttpProtocol::Http2PriorKnowledge)
        .build()
        .unwrap();
    assert_eq!(h2.call("ok").await.unwrap(), "ok");
    let http1 = CallsClient::builder()
        .url(&url)
        .options(feign_core::Options::new().read_timeout(Duration::from_secs(2)))
        .build()
        .unwrap();
    assert!(
        http1.call("ok").await.is_err(),
        "HTTP/1 gets no answer there"
    );
}

#[tokio::test]
async fn the_pool_keeps_idle_connections_as_configured() {
    let server = Server::start(router()).await;
    let pooled = CallsClient::builder().url(server.url()).build().unwrap();
    pooled.call("a").await.unwrap();
    pooled.call("b").await.unwrap();
    assert_eq!(server.connection_count(), 1, "the connection was reused");

    let server = Server::start(router()).await;
    let unpooled = CallsClient::builder()
        .url(server.url())
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    unpooled.call("a").await.unwrap();
    unpooled.call("b").await.unwrap();
    assert_eq!(server.connection_count(), 2, "no idle connection kept");

    let server = Server::start(router()).await;
    let short = CallsClient::builder()
        .url(server.url())
        .pool_idle_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    short.call("a").await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    short.call("b").await.unwrap();
    assert_eq!(server.connection_count(), 2, "the idle connection expired");
}

#[test]
fn transport_settings_with_a_transport_of_ones_own_are_refused() {
    let error = CallsClient::builder()
        .url("http://127.0.0.1:1")
        .client(feign_core::ReqwestClient::from_reqwest(
            reqwest::Client::new(),
        ))
        .pool_max_idle_per_host(1)
        .build()
        .unwrap_err();
    assert!(error.is_builder(), "{error:?}");
    assert!(error.to_string().contains("built-in transport"), "{error}");
}

#[test]
fn a_port_out_of_range_is_refused_at_build() {
    for url in ["http://127.0.0.1:99999", "http://u:pw@127.0.0.1:65536/x"] {
        let error = CallsClient::builder().url(url).build().unwrap_err();
        assert!(error.is_builder(), "{error:?}");
        let text = error.to_string();
        assert!(text.contains("port"), "{text}");
        assert!(!text.contains("pw"), "{text}");
    }
    for url in [
        "http://127.0.0.1:65535",
        "http://[::1]:8080",
        "https://localhost",
    ] {
        CallsClient::builder().url(url).build().unwrap();
    }
}
