//! The balancer for any HTTP call: Spring's `@LoadBalanced RestClient`, as a `tower` layer and
//! (feature `reqwest-middleware`) a `reqwest_middleware::Middleware`.
//!
//! A request to `http://order-service/orders/1` goes to an instance of `order-service` the
//! [`LoadBalancer`](crate::LoadBalancer) picks, as `http://10.0.0.7:8080/orders/1` (the
//! instance's scheme, authority and base path, then the request's path and query). Each attempt
//! is reported to the balancer (in-flight counts, latency, ejection, metrics), and a failed
//! attempt is retried on another instance as the balancer's [`RetryConfig`](crate::RetryConfig)
//! says, under its retry budget:
//!
//! - a connect failure (nothing was sent) is retried for any method;
//! - a retryable status (502, 503, 504 by default), a timeout or a failure after the request
//!   went out is retried for idempotent methods only (GET, HEAD, OPTIONS, PUT, DELETE, or a
//!   request with an `Idempotency-Key` header), unless `retry-on-all-operations`;
//! - a request is retried only when its body can be sent again: the tower layer requires a
//!   `Clone` body (`Full<Bytes>`, `String`, `Empty`...), the middleware retries a request
//!   `reqwest::Request::try_clone` can copy (not a streamed body).
//!
//! When no retry is left, the caller gets what the last attempt got: a response (a 503 too) or
//! the transport's error.
//!
//! **Which hosts are service names.** A host without a port that is not an IP address is a
//! service name, and a name with no instance is an error saying so (as Spring's
//! `@LoadBalanced` client does); a host with a port (`http://127.0.0.1:8080`,
//! `http://example.com:443`) or an IP address passes through unchanged, as does a request
//! without a host. Each name seen becomes a service of the balancer, as a feign client's does.
//!
//! **Credentials.** `http://user:password@order-service/...` sends them as an `Authorization:
//! Basic` header (reqwest does so itself; the layer does the same), and so does an instance
//! URL's userinfo (marked sensitive; a request's own `Authorization` wins): they never stay in
//! the URL sent, so they reach no log and no error.

mod call;
mod layer;
#[cfg(feature = "reqwest-middleware")]
mod middleware;

pub use layer::{LoadBalanced, LoadBalancedLayer};
#[cfg(feature = "reqwest-middleware")]
pub use middleware::LoadBalancedMiddleware;
