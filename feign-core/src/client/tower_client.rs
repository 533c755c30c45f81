//! Any `tower::Service` as the transport.

use async_trait::async_trait;
use bytes::Bytes;
use http_body_util::BodyExt;
use tower::{Service, ServiceExt};

use super::{Client, ResponseBody, SendOptions};
use crate::error::BoxError;
use crate::Error;

/// A [`Client`] over any `tower::Service<http::Request<Bytes>>` (hyper-util clients, layered
/// stacks, in-process routers behind `map_request`). The service is cloned for each request.
/// Its errors count as transport errors; connect timeouts and redirects are the service's
/// business.
#[derive(Clone, Debug)]
pub struct TowerClient<S> {
    service: S,
}

impl<S> TowerClient<S> {
    /// Wraps `service`.
    pub fn new(service: S) -> Self {
        TowerClient { service }
    }
}

#[async_trait]
impl<S, B> Client for TowerClient<S>
where
    S: Service<http::Request<Bytes>, Response = http::Response<B>> + Clone + Send + Sync + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    async fn send(
        &self,
        request: http::Request<Bytes>,
        _options: &SendOptions,
    ) -> Result<http::Response<ResponseBody>, Error> {
        let service = self.service.clone();
        let response = service
            .oneshot(request)
            .await
            .map_err(|e| Error::transport(e.into()))?;
        Ok(response.map(|body| body.map_err(Into::into).boxed_unsync()))
    }
}
