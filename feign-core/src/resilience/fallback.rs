//! Fallbacks: another implementation of the client's trait that answers when a call fails.

use std::any::Any;
use std::sync::Arc;

use crate::Error;

/// Makes the fallback of a failed call from its cause, like OpenFeign's `FallbackFactory`.
///
/// `T` is the client's trait object, e.g. `dyn OrderService`. Name the factory in
/// `#[feign_client(.., fallback_factory = MyFactory)]` (it must then implement `Default`) or give
/// it to [`Builder::fallback_factory`](crate::Builder::fallback_factory).
///
/// ```
/// use std::sync::Arc;
/// use feign_core::{feign_client, Error, FallbackFactory};
///
/// #[feign_client("order-service", url = "http://127.0.0.1:9", fallback_factory = Cached)]
/// pub trait OrderService {
///     #[get("/orders/{id}/status")]
///     async fn status(&self, #[path] id: u64) -> Result<String, Error>;
/// }
///
/// #[derive(Default)]
/// struct Cached;
///
/// impl FallbackFactory<dyn OrderService> for Cached {
///     fn create(&self, cause: Error) -> Arc<dyn OrderService> {
///         Arc::new(Unknown { why: cause.to_string() })
///     }
/// }
///
/// struct Unknown {
///     why: String,
/// }
///
/// #[feign_core::async_trait]
/// impl OrderService for Unknown {
///     async fn status(&self, _id: u64) -> Result<String, Error> {
///         Ok(format!("unknown ({})", self.why))
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a fallback factory of `{T}`",
    label = "a fallback factory must implement `FallbackFactory<{T}>`",
    note = "implement `feign_core::FallbackFactory<{T}>` for `{Self}`, whose `create` returns an `Arc<{T}>`"
)]
pub trait FallbackFactory<T: ?Sized>: Send + Sync + 'static {
    /// The fallback that answers the call `cause` ended.
    fn create(&self, cause: Error) -> Arc<T>;
}

/// A shared factory is a factory.
impl<T: ?Sized + 'static> FallbackFactory<T> for Arc<dyn FallbackFactory<T>> {
    fn create(&self, cause: Error) -> Arc<T> {
        (**self).create(cause)
    }
}

/// What a client falls back to, stored type-erased in the core and recovered by the generated
/// code, which knows `T`.
pub(crate) enum Fallback<T: ?Sized> {
    Instance(Arc<T>),
    Factory(Arc<dyn FallbackFactory<T>>),
}

impl<T: ?Sized + Send + Sync + 'static> Fallback<T> {
    pub(crate) fn erase(self) -> Arc<dyn Any + Send + Sync> {
        Arc::new(self)
    }

    pub(crate) fn get(&self, cause: Error) -> Arc<T> {
        match self {
            Fallback::Instance(instance) => instance.clone(),
            Fallback::Factory(factory) => factory.create(cause),
        }
    }
}
