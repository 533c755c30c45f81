//! TLS on loopback: a CA made in the test with the server and client certificates it signs
//! ([`Pki`]), and an HTTPS server that can require a client certificate ([`TlsServer`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

/// A certificate and its private key, both PEM.
#[derive(Clone, Debug)]
pub struct CertKey {
    /// The certificate.
    pub cert: String,
    /// Its private key (PKCS#8).
    pub key: String,
}

/// A CA made here, a server certificate for `127.0.0.1` and `localhost` and a client
/// certificate (`CN=feign-client`), both signed by it.
#[derive(Clone, Debug)]
pub struct Pki {
    /// The CA's certificate, PEM.
    pub ca: String,
    /// The server's certificate and key.
    pub server: CertKey,
    /// The client's certificate and key.
    pub client: CertKey,
}

impl Pki {
    /// A fresh CA (`CN=feign test CA`) and the two certificates it signs.
    pub fn new() -> Pki {
        Pki::with_ca_name("feign test CA")
    }

    /// A fresh CA named `name` and the two certificates it signs. Two CAs of one name are two
    /// keys under one issuer name (a forged CA); of two names, strangers to each other.
    pub fn with_ca_name(name: &str) -> Pki {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, name);
        let ca_key = KeyPair::generate().expect("CA key");
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");
        let sign = |names: Vec<String>, cn: &str| {
            let mut params = CertificateParams::new(names).expect("params");
            params.distinguished_name.push(DnType::CommonName, cn);
            let key = KeyPair::generate().expect("key");
            let cert = params.signed_by(&key, &ca, &ca_key).expect("signed");
            CertKey {
                cert: cert.pem(),
                key: key.serialize_pem(),
            }
        };
        Pki {
            ca: ca.pem(),
            server: sign(vec!["127.0.0.1".into(), "localhost".into()], "127.0.0.1"),
            client: sign(Vec::new(), "feign-client"),
        }
    }
}

impl Pki {
    /// The client's private key encrypted with `password` (PKCS#8, PBES2: PBKDF2-SHA256 and
    /// AES-256-CBC), as `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes it.
    pub fn encrypted_client_key(&self, password: &str) -> String {
        use pkcs8::der::Decode as _;
        let (_, der) = pkcs8::der::pem::decode_vec(self.client.key.as_bytes()).expect("PEM");
        let info = pkcs8::PrivateKeyInfo::from_der(&der).expect("PKCS#8");
        let params = pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(
            2048,
            b"feign-test-salt!",
            b"feign-test-iv-16",
        )
        .expect("parameters");
        let encrypted = info
            .encrypt_with_params(params, password)
            .expect("encrypted");
        encrypted
            .to_pem("ENCRYPTED PRIVATE KEY", pkcs8::LineEnding::LF)
            .expect("PEM")
            .to_string()
    }
}

impl Default for Pki {
    fn default() -> Self {
        Pki::new()
    }
}

/// How a [`TlsServer`] shakes hands.
#[derive(Clone, Debug, Default)]
pub struct TlsOptions {
    /// Require a client certificate signed by this CA (PEM).
    pub client_ca: Option<String>,
    /// Speak TLS 1.2 only (rustls's defaults otherwise: 1.2 and 1.3).
    pub tls12_only: bool,
}

/// An HTTPS server on 127.0.0.1 in front of an axum router (HTTP/1.1), counting handshakes
/// that completed and connections that did not.
#[derive(Debug)]
pub struct TlsServer {
    /// Where it listens.
    pub addr: SocketAddr,
    handshakes: Arc<AtomicUsize>,
    refused: Arc<AtomicUsize>,
}

impl TlsServer {
    /// Serves `router` with `pki`'s server certificate.
    pub async fn start(router: Router, pki: &Pki, options: TlsOptions) -> TlsServer {
        let acceptor = acceptor(pki, &options);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local address");
        let handshakes = Arc::new(AtomicUsize::new(0));
        let refused = Arc::new(AtomicUsize::new(0));
        let (done, failed) = (handshakes.clone(), refused.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (acceptor, router) = (acceptor.clone(), router.clone());
                let (done, failed) = (done.clone(), failed.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(stream).await else {
                        failed.fetch_add(1, Ordering::SeqCst);
                        return;
                    };
                    done.fetch_add(1, Ordering::SeqCst);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), router_service(router))
                        .await;
                });
            }
        });
        TlsServer {
            addr,
            handshakes,
            refused,
        }
    }

    /// Serves `router`, requiring a client certificate signed by `pki`'s CA.
    pub async fn mutual(router: Router, pki: &Pki) -> TlsServer {
        let options = TlsOptions {
            client_ca: Some(pki.ca.clone()),
            ..TlsOptions::default()
        };
        TlsServer::start(router, pki, options).await
    }

    /// The base URL, `https://127.0.0.1:port`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// Handshakes that completed.
    pub fn handshakes(&self) -> usize {
        self.handshakes.load(Ordering::SeqCst)
    }

    /// Connections whose handshake failed.
    pub fn refused(&self) -> usize {
        self.refused.load(Ordering::SeqCst)
    }
}

/// `router` as a hyper service.
pub(crate) fn router_service(
    router: Router,
) -> impl hyper::service::Service<
    http::Request<Incoming>,
    Response = axum::response::Response,
    Error = Infallible,
    Future = impl std::future::Future<Output = Result<axum::response::Response, Infallible>> + Send,
> + Clone {
    hyper::service::service_fn(move |req: http::Request<Incoming>| {
        let router = router.clone();
        async move {
            let response = router.oneshot(req.map(axum::body::Body::new)).await;
            Ok::<_, Infallible>(response.unwrap_or_else(|never| match never {}))
        }
    })
}

/// The acceptor of `pki`'s server certificate, as `options` say.
pub(crate) fn acceptor(pki: &Pki, options: &TlsOptions) -> TlsAcceptor {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = vec![CertificateDer::from_pem_slice(pki.server.cert.as_bytes()).expect("cert")];
    let key = PrivateKeyDer::from_pem_slice(pki.server.key.as_bytes()).expect("key");
    let versions: &[&rustls::SupportedProtocolVersion] = if options.tls12_only {
        &[&rustls::version::TLS12]
    } else {
        rustls::DEFAULT_VERSIONS
    };
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .expect("versions");
    let config = match &options.client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            roots
                .add(CertificateDer::from_pem_slice(ca.as_bytes()).expect("client CA"))
                .expect("a root");
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .expect("a client verifier");
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = config.with_single_cert(chain, key).expect("server cert");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    TlsAcceptor::from(Arc::new(config))
}

/// An HTTP/2-only server on plain TCP (`h2c`, prior knowledge) on 127.0.0.1 in front of
/// `router`; an HTTP/1 request gets no answer. Returns its base URL.
pub async fn serve_h2c(router: Router) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local address");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let router = router.clone();
            tokio::spawn(async move {
                let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), router_service(router))
                    .await;
            });
        }
    });
    format!("http://{addr}")
}
