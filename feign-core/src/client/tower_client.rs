//! Any `tower::Service` as the transport.

use std::marker::PhantomData;

use async_trait::async_trait;
use bytes::Bytes;
use http_body_util::BodyExt;
use tower::{Service, ServiceExt};

use super::{convert_body, Client, FromRequestBody, ResponseBody, SendOptions};
use crate::body::RequestBody;
use crate::error::BoxError;
use crate::Error;

/// A [`Client`] over any `tower::Service<http::Request<RequestBody>>` (hyper-util clients,
/// layered stacks, in-process routers), or `tower::Service<http::Request<Bytes>>` for a
/// service that handles buffered bodies only (see [`FromRequestBody`]). The service is cloned
/// for each request. Its errors count as transport errors; connect timeouts and redirects are
/// the service's business.
pub struct TowerClient<S, R = RequestBody> {
    service: S,
    request_body: PhantomData<fn(R)>,
}

impl<S, R> TowerClient<S, R> {
    /// Wraps `service`.
    pub fn new(service: S) -> Self {
        TowerClient {
            service,
            request_body: PhantomData,
        }
    }
}

impl<S: Clone, R> Clone for TowerClient<S, R> {
    fn clone(&self) -> Self {
        TowerClient::new(self.service.clone())
    }
}

impl<S: std::fmt::Debug, R> std::fmt::Debug for TowerClient<S, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TowerClient")
            .field("service", &self.service)
            .finish()
    }
}

#[async_trait]
impl<S, R, B> Client for TowerClient<S, R>
where
    R: FromRequestBody,
    S: Service<http::Request<R>, Response = http::Response<B>> + Clone + Send + Sync + 'static,
    S::Future: Send,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    async fn send(
        &self,
        request: http::Request<RequestBody>,
        _options: &SendOptions,
    ) -> Result<http::Response<ResponseBody>, Error> {
        let request = convert_body(request)?;
        let service = self.service.clone();
        let response = service
            .oneshot(request)
            .await
            .map_err(|e| Error::transport(e.into()))?;
        Ok(response.map(|body| body.map_err(Into::into).boxed_unsync()))
    }
}
