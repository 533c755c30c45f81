//! HTTPS in front of an axum router: rustls with the example's server certificate, requiring a
//! client certificate its CA signed, each connection served by hyper over HTTP/1.1.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use crate::pki::Pki;
use quickstart::StepResult;

/// An acceptor for the server certificate that admits only clients whose certificate the CA
/// signed.
pub(crate) fn mutual_tls(pki: &Pki) -> StepResult<TlsAcceptor> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_slice(pki.ca.as_bytes())?)?;
    let clients =
        WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone()).build()?;
    let chain = vec![CertificateDer::from_pem_slice(pki.server.cert.as_bytes())?];
    let key = PrivateKeyDer::from_pem_slice(pki.server.key.as_bytes())?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(clients)
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// How long a client has to complete its TLS handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// A server started by [`serve`].
pub(crate) struct Server {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Server {
    /// Stops accepting, closes every open connection, and returns once they are closed.
    pub(crate) async fn stop(self) -> StepResult<()> {
        let _ = self.stop.send(());
        Ok(self.task.await?)
    }
}

/// Serves `router` on `listener` until [`Server::stop`].
pub(crate) fn serve(listener: TcpListener, acceptor: TlsAcceptor, router: Router) -> Server {
    let (stop_tx, stop) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let mut connections = JoinSet::new();
        tokio::pin!(stop);
        loop {
            let stream = tokio::select! {
                _ = &mut stop => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => {
                        // Out of descriptors, say: wait instead of spinning.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                // Reaps finished connections so the set does not grow.
                Some(_) = connections.join_next() => continue,
            };
            let (acceptor, service) = (acceptor.clone(), TowerToHyperService::new(router.clone()));
            connections.spawn(async move {
                // A client without a certificate from the CA fails here, before any request;
                // one that never finishes its handshake is dropped.
                let handshake = tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await;
                let Ok(Ok(tls)) = handshake else {
                    return;
                };
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
        connections.shutdown().await;
    });
    Server {
        stop: stop_tx,
        task,
    }
}
