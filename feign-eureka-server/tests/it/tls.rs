//! The registry over TLS with a certificate made here by a CA made here: a client trusting the
//! CA reads it over HTTPS, one that does not is refused, plain HTTP gets no answer, and a key that
//! is not the certificate's, or PEM that holds nothing (a client CA's included), fails the start
//! with a reason. Mutual TLS, and the client certificates it refuses (none, a stranger CA's, a
//! forged CA's), each with its reason on both sides, are tested with the client in
//! feign-eureka's `transport.rs`.

use feign_eureka_server::{EurekaServer, ServerError, TlsError};

use crate::support::dev;

/// The CA and the registry's certificate and key, all PEM (test-support's PKI, flattened).
pub(crate) struct Pki {
    pub(crate) ca: String,
    pub(crate) cert: String,
    pub(crate) key: String,
}

pub(crate) fn pki() -> Pki {
    let made = feign_test_support::tls::Pki::new();
    Pki {
        ca: made.ca,
        cert: made.server.cert,
        key: made.server.key,
    }
}

pub(crate) fn client_trusting(ca_pem: Option<&str>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder().tls_built_in_root_certs(false);
    if let Some(ca) = ca_pem {
        builder =
            builder.add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap());
    }
    builder.build().unwrap()
}

async fn start(pki: &Pki) -> EurekaServer {
    dev()
        .tls_pem(pki.cert.as_bytes(), pki.key.as_bytes())
        .start()
        .await
        .expect("the registry starts with its certificate")
}

#[tokio::test]
async fn a_client_trusting_the_ca_reads_the_registry_over_https() {
    let pki = pki();
    let server = start(&pki).await;
    let url = server.url().to_owned();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let response = client_trusting(Some(&pki.ca))
        .get(format!("{url}apps/"))
        .header("Accept", "application/json")
        .send()
        .await
        .expect("a TLS handshake with a trusted certificate");
    assert_eq!(response.status(), 200);

    let unknown = client_trusting(None)
        .get(format!("{url}apps/"))
        .send()
        .await;
    let error = unknown.expect_err("a certificate from an unknown CA is refused");
    assert!(error.is_connect(), "{error:?}");

    let plain = url.replacen("https://", "http://", 1);
    let answered = client_trusting(None)
        .get(format!("{plain}apps/"))
        .send()
        .await;
    assert!(answered.is_err(), "plain HTTP gets no HTTP answer");
    server.shutdown().await;
}

#[tokio::test]
async fn a_certificate_and_key_that_cannot_serve_tls_fail_the_start() {
    let pki = pki();
    let other = self::pki();
    let mismatched = dev()
        .tls_pem(pki.cert.as_bytes(), other.key.as_bytes())
        .start()
        .await;
    assert!(
        matches!(mismatched, Err(ServerError::Tls(TlsError::Refused(_)))),
        "{mismatched:?}"
    );
    let empty = dev()
        .tls_pem("not a certificate", pki.key.as_bytes())
        .start()
        .await;
    assert!(
        matches!(empty, Err(ServerError::Tls(TlsError::NoCertificate))),
        "{empty:?}"
    );
    let no_key = dev()
        .tls_pem(pki.cert.as_bytes(), "no key here")
        .start()
        .await;
    assert!(
        matches!(no_key, Err(ServerError::Tls(TlsError::Key(_)))),
        "{no_key:?}"
    );
    let no_client_ca = dev()
        .tls_pem(pki.cert.as_bytes(), pki.key.as_bytes())
        .tls_client_ca_pem("no CA here")
        .start()
        .await;
    assert!(
        matches!(no_client_ca, Err(ServerError::Tls(TlsError::ClientCa(_)))),
        "{no_client_ca:?}"
    );
    let client_ca_alone = dev().tls_client_ca_pem(pki.cert.as_bytes()).start().await;
    match client_ca_alone {
        Err(ServerError::Tls(error @ TlsError::ClientCaWithoutCertificate)) => {
            assert!(error.to_string().contains("tls_pem"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    let shown = format!(
        "{:?}",
        dev().tls_pem(pki.cert.as_bytes(), pki.key.as_bytes())
    );
    assert!(
        !shown.contains("PRIVATE KEY"),
        "the key stays out of Debug: {shown}"
    );
}
