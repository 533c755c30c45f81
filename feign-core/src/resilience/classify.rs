//! Which failed calls count against a service: for the circuit breaker and for fallbacks.

use crate::Error;

/// How a failed call counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classification {
    /// The service failed: the breaker records a failure and a fallback, if any, answers.
    Failure,
    /// The service answered as it should (e.g. a 4xx): the breaker records a success and the
    /// error reaches the caller.
    Success,
    /// Neither: the breaker does not record the call (e.g. an argument that could not be sent)
    /// and the error reaches the caller.
    Ignore,
}

/// Decides how a failed call counts; set with
/// [`Builder::failure_classifier`](crate::Builder::failure_classifier).
///
/// A plain `fn` is enough: the future-free signature keeps it cheap on every failed call.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a failure classifier",
    note = "implement `feign_core::resilience::FailureClassifier`, or pass a closure to `feign_core::resilience::classifier_fn`"
)]
pub trait FailureClassifier: Send + Sync + 'static {
    /// How `error`, the outcome of a whole call (retries included), counts.
    fn classify(&self, error: &Error) -> Classification;
}

/// The default classifier, as the circuit breakers of Spring Cloud OpenFeign are usually set:
/// a 5xx, a timeout, a connection or transport failure, an unreadable body and "no instance"
/// are failures; any other status (4xx) and a decode error are successes (the service
/// answered); an argument, interceptor or configuration error is ignored (nothing was sent).
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultClassifier;

impl FailureClassifier for DefaultClassifier {
    fn classify(&self, error: &Error) -> Classification {
        if let Some(status) = error.status() {
            return if status.is_server_error() {
                Classification::Failure
            } else {
                Classification::Success
            };
        }
        if error.is_timeout()
            || error.is_connect()
            || error.is_transport()
            || error.is_body()
            || error.is_no_instance()
        {
            Classification::Failure
        } else if error.is_request()
            || error.is_interceptor()
            || error.is_builder()
            || error.is_circuit_open()
            || error.is_bulkhead_full()
        {
            Classification::Ignore
        } else {
            Classification::Success
        }
    }
}

/// A [`FailureClassifier`] from a closure.
///
/// ```
/// use feign_core::resilience::{classifier_fn, Classification, DefaultClassifier, FailureClassifier};
///
/// // A 429 counts as a failure too; everything else as by default.
/// let classifier = classifier_fn(|error| match error.status() {
///     Some(status) if status.as_u16() == 429 => Classification::Failure,
///     _ => DefaultClassifier.classify(error),
/// });
/// # let _ = classifier;
/// ```
pub fn classifier_fn<F>(classify: F) -> ClassifierFn<F>
where
    F: Fn(&Error) -> Classification + Send + Sync + 'static,
{
    ClassifierFn(classify)
}

/// The classifier made by [`classifier_fn`].
#[derive(Clone, Copy)]
pub struct ClassifierFn<F>(F);

impl<F> FailureClassifier for ClassifierFn<F>
where
    F: Fn(&Error) -> Classification + Send + Sync + 'static,
{
    fn classify(&self, error: &Error) -> Classification {
        (self.0)(error)
    }
}

impl<F> std::fmt::Debug for ClassifierFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClassifierFn")
    }
}
