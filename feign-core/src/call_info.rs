//! What every attempt of one call shares, as the resolver and the retry policy see it.

use http::{HeaderMap, HeaderName, Method};

/// `Idempotency-Key`: a request carrying it may be retried (and hedged) whatever its method,
/// since the server can tell a repeat from a new request.
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The call an attempt belongs to, the same for each of its attempts: the resolver reads it in
/// [`ChooseRequest`](crate::resolve::ChooseRequest), the retry policy in
/// [`RetryContext`](crate::retry::RetryContext). Borrowed and `Copy`: handing it on allocates
/// nothing.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CallInfo<'a> {
    /// The service name the client was declared with, e.g. `order-service`.
    pub service: &'a str,
    /// The method key of the call, e.g. `OrderService#get_order`.
    pub method_key: &'a str,
    /// The HTTP method of the call.
    pub method: &'a Method,
    /// True for GET, HEAD, OPTIONS, PUT, DELETE, a method marked `#[idempotent]`, or a request
    /// with an `Idempotency-Key` header.
    pub idempotent: bool,
}

impl<'a> CallInfo<'a> {
    /// A call of `method`, idempotent when RFC 9110 calls the method so (GET, HEAD, OPTIONS,
    /// PUT, DELETE).
    pub fn new(service: &'a str, method_key: &'a str, method: &'a Method) -> Self {
        CallInfo {
            service,
            method_key,
            method,
            idempotent: matches!(
                *method,
                Method::GET | Method::HEAD | Method::OPTIONS | Method::PUT | Method::DELETE
            ),
        }
    }

    /// Marks the call idempotent or not, whatever its method.
    #[must_use]
    pub fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// Marks the call idempotent when its request carries an [`IDEMPOTENCY_KEY`] header.
    #[must_use]
    pub fn with_idempotency_key(mut self, headers: &HeaderMap) -> Self {
        self.idempotent |= headers.contains_key(IDEMPOTENCY_KEY);
        self
    }
}
