//! What a `tower::Layer` added with [`Builder::layer`](crate::Builder::layer) wraps: a service
//! from [`CallRequest`] to [`Response`](crate::Response), the rest of the call after the request
//! interceptors (attempts, retries, the transport).

pub use crate::pipeline::CallRequest;
