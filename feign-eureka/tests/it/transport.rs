//! The client's transport to the registry: behind a private CA that requires mutual TLS (the
//! embedded registry serves HTTPS with a certificate from a CA made here and asks every client
//! for a certificate of that CA, refusing none, a stranger's and a forger's, each for its own
//! reason on both sides), and behind a proxy that requires credentials; settings come
//! from the builder, `eureka.client.tls.*` and `eureka.client.proxy-*`.

use feign_config::Config;
use feign_eureka::{Error, EurekaClient, InstanceConfig};
use feign_eureka_server::EurekaServer;
use feign_test_support::proxy::ForwardProxy;
use feign_test_support::tls::Pki;
use feign_test_support::{error_chain, TempDir};

async fn mtls_registry(pki: &Pki) -> EurekaServer {
    EurekaServer::builder()
        .bind("127.0.0.1:0")
        .read_only_cache(false)
        .tls_pem(pki.server.cert.as_bytes(), pki.server.key.as_bytes())
        .tls_client_ca_pem(pki.ca.as_bytes())
        .start()
        .await
        .expect("the registry starts with TLS")
}

#[tokio::test]
async fn a_client_with_the_ca_and_a_certificate_registers_and_discovers_over_mutual_tls() {
    let (logs, _guard) = feign_test_support::Captured::install();
    let pki = Pki::new();
    let server = mtls_registry(&pki).await;
    let tls = feign_core::Tls::new()
        .ca_pem(pki.ca.clone())
        .identity_pem(pki.client.cert.clone(), pki.client.key.clone());
    let eureka = EurekaClient::builder()
        .development()
        .service_urls([server.url()])
        .tls(tls)
        .instance(InstanceConfig::new("orders", 8080).ip_address("127.0.0.1"))
        .enforce_fetch_at_init(true)
        .start()
        .await
        .expect("a TLS handshake with our certificate");
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while !eureka.is_registered() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("registered over mutual TLS");
    eureka.refresh().await.unwrap();
    assert_eq!(eureka.instances("orders").map(|i| i.len()), Some(1));
    eureka.shutdown().await;

    // Without a certificate of our own, with one from a CA the registry does not know, and with
    // one from a CA forged under its CA's name: the registry refuses each handshake, and both
    // sides say why.
    let stranger = Pki::with_ca_name("stranger CA");
    let forger = Pki::new();
    let refusals = [
        (None, "CertificateRequired", "peer sent no certificates"),
        (
            Some(&stranger),
            "UnknownCA",
            "invalid peer certificate: UnknownIssuer",
        ),
        (
            Some(&forger),
            "DecryptError",
            "invalid peer certificate: BadSignature",
        ),
    ];
    for (identity, alert, reason) in refusals {
        let mut tls = feign_core::Tls::new().ca_pem(pki.ca.clone());
        if let Some(other) = identity {
            tls = tls.identity_pem(other.client.cert.clone(), other.client.key.clone());
        }
        let refused = EurekaClient::builder()
            .service_urls([server.url()])
            .tls(tls)
            .enforce_fetch_at_init(true)
            .start()
            .await;
        let Err(error) = refused else {
            panic!("the handshake with {alert} expected was accepted");
        };
        assert!(matches!(error, Error::InitialFetch(_)), "{error:?}");
        let text = error_chain(&error);
        assert!(
            text.contains(&format!("received fatal alert: {alert}")),
            "the client is told {alert}: {text}"
        );
        let handshakes = logs.matching(tracing::Level::DEBUG, "a TLS handshake failed");
        assert!(
            handshakes
                .iter()
                .any(|event| event.fields["error"] == reason),
            "the registry logs {reason:?}: {handshakes:?}"
        );
    }

    // The public roots only: the registry's certificate is refused.
    let error = EurekaClient::builder()
        .service_urls([server.url()])
        .enforce_fetch_at_init(true)
        .start()
        .await
        .unwrap_err();
    let text = error_chain(&error);
    assert!(text.contains("certificate"), "{text}");
    server.shutdown().await;
}

/// Starts a client from `yaml`, which must fetch the registry at start, and stops it.
async fn start_from(yaml: &str) {
    let config = Config::from_yaml_str(yaml, "application.yml").unwrap();
    let eureka = EurekaClient::builder()
        .config(&config)
        .unwrap()
        .start()
        .await
        .expect("the configured CA and certificate are used");
    eureka.shutdown().await;
}

#[tokio::test]
async fn eureka_client_tls_properties_set_the_transport() {
    let pki = Pki::new();
    let server = mtls_registry(&pki).await;
    let dir = TempDir::new("eureka-tls");
    let ca = dir.write("ca.pem", &pki.ca);
    let store = dir.write(
        "client.pem",
        &format!(
            "{}{}",
            pki.client.cert,
            pki.encrypted_client_key("open sesame")
        ),
    );
    let yaml = format!(
        "eureka.client:\n  service-url.defaultZone: {}\n  register-with-eureka: false\n  should-enforce-fetch-registry-at-init: true\n  tls:\n    enabled: true\n    key-store: file:{}\n    key-store-type: PEM\n    key-password: open sesame\n    trust-store: {}\n    trust-store-password: changeit\n",
        server.url(),
        store.display(),
        ca.display()
    );
    start_from(&yaml).await;

    // The same by a Spring Boot PEM bundle.
    let yaml = format!(
        "spring.ssl.bundle.pem.registry:\n  truststore.certificate: {}\n  keystore.certificate: {}\n  keystore.private-key: {}\n  keystore.private-key-password: open sesame\neureka.client:\n  service-url.defaultZone: {}\n  register-with-eureka: false\n  should-enforce-fetch-registry-at-init: true\n  tls.enabled: true\n  tls.ssl-bundle: registry\n",
        ca.display(),
        store.display(),
        store.display(),
        server.url(),
    );
    start_from(&yaml).await;
    server.shutdown().await;

    for (text, expected) in [
        (
            "eureka.client.tls.key-store-type: PKCS12",
            "only PEM stores",
        ),
        (
            "eureka.client.tls.trust-stor: ca.pem",
            "eureka.client.tls.trust-stor",
        ),
        (
            "eureka.client.tls.ssl-bundle: nowhere",
            "no SSL bundle `nowhere`",
        ),
    ] {
        let config = Config::from_yaml_str(text, "application.yml").unwrap();
        let error = EurekaClient::builder().config(&config).unwrap_err();
        assert!(error.to_string().contains(expected), "{text}: {error}");
        assert!(!error.to_string().contains("secret"), "{error}");
    }

    // A key that is not the certificate's fails the start, naming the file.
    let other = Pki::new();
    let wrong = dir.write(
        "wrong.pem",
        &format!("{}{}", pki.client.cert, other.client.key),
    );
    let error = EurekaClient::builder()
        .service_urls(["https://127.0.0.1:1/eureka/"])
        .tls(feign_core::Tls::new().identity_files(&wrong, &wrong))
        .start()
        .await
        .unwrap_err();
    let text = error_chain(&error);
    assert!(matches!(error, Error::HttpClient(_)), "{error:?}");
    assert!(
        text.contains("does not match") && text.contains("wrong.pem"),
        "{text}"
    );
}

#[tokio::test]
async fn eureka_client_proxy_properties_send_every_call_through_the_proxy() {
    let registry = crate::embedded_registry().await;
    let expected = "Basic ZXVyZWthOnByMHh5LXB3"; // eureka:pr0xy-pw
    let proxy = ForwardProxy::start(Some(expected.to_owned())).await;
    let yaml = format!(
        "eureka.client:\n  service-url.defaultZone: {}\n  register-with-eureka: false\n  should-enforce-fetch-registry-at-init: true\n  proxy-host: 127.0.0.1\n  proxy-port: {}\n  proxy-user-name: eureka\n  proxy-password: pr0xy-pw\n",
        registry.url(),
        proxy.addr.port()
    );
    let config = Config::from_yaml_str(&yaml, "application.yml").unwrap();
    let builder = EurekaClient::builder().config(&config).unwrap();
    let shown = format!("{builder:?}");
    assert!(!shown.contains("pr0xy-pw"), "{shown}");
    let eureka = builder
        .start()
        .await
        .expect("the registry through the proxy");
    let seen = proxy.seen();
    assert!(!seen.is_empty(), "the fetch went through the proxy");
    assert!(
        seen.iter()
            .all(|r| r.authorization.as_deref() == Some(expected) && r.target.contains("/eureka/")),
        "{seen:?}"
    );
    eureka.shutdown().await;
    registry.shutdown().await;

    let config =
        Config::from_yaml_str("eureka.client.proxy-port: 3128", "application.yml").unwrap();
    let error = EurekaClient::builder().config(&config).unwrap_err();
    assert!(error.to_string().contains("proxy-host"), "{error}");
}
