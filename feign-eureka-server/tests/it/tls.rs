//! The registry over TLS with a certificate made here by a CA made here: a client trusting the
//! CA reads it over HTTPS, one that does not is refused, plain HTTP gets no answer, and a key that
//! is not the certificate's, or PEM that holds nothing, fails the start with a reason.

use feign_eureka_server::{EurekaServer, ServerError, TlsError};
use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};

use crate::support::dev;

/// A CA, and a certificate for 127.0.0.1 and localhost it signed, with its key; all PEM.
pub(crate) struct Pki {
    pub(crate) ca: String,
    pub(crate) cert: String,
    pub(crate) key: String,
}

pub(crate) fn pki() -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let server_params =
        CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = server_params.signed_by(&key, &ca, &ca_key).unwrap();
    Pki {
        ca: ca.pem(),
        cert: cert.pem(),
        key: key.serialize_pem(),
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
    let shown = format!(
        "{:?}",
        dev().tls_pem(pki.cert.as_bytes(), pki.key.as_bytes())
    );
    assert!(
        !shown.contains("PRIVATE KEY"),
        "the key stays out of Debug: {shown}"
    );
}
