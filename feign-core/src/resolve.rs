//! Target resolution: how a client that has only a service name finds where to send a call.
//!
//! feign-core knows nothing of discovery. A client built with a [`Resolver`] asks it, once per
//! attempt, for an instance of its service; feign-lb implements this trait over instance
//! suppliers and balancing policies.
//!
//! What every attempt of one call shares, the resolver and the retry policy read as a
//! [`CallInfo`]; a request carrying [`IDEMPOTENCY_KEY`] counts as idempotent whatever its method.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, Method, StatusCode};
use tokio::time::Instant;

pub use crate::call_info::{CallInfo, IDEMPOTENCY_KEY};

use crate::Error;

/// Picks the instance that one attempt of a call goes to.
///
/// Picking is synchronous and should not block: implementations read an immutable snapshot
/// kept fresh in the background. The call's pipeline calls [`Resolver::choose`] once per
/// attempt, passing every instance already tried in that call so a retry can avoid them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot resolve service names to instances",
    note = "implement `feign_core::resolve::Resolver`, or use `feign_lb::LoadBalancer`"
)]
pub trait Resolver: Send + Sync + 'static {
    /// Chooses an instance for one attempt, or fails with an error that names the service and
    /// says whether no instance is registered or all were filtered out or ejected.
    fn choose(&self, request: &ChooseRequest<'_>) -> Result<Chosen, Error>;

    /// A retry policy for `service` that replaces the client's default one when the builder was
    /// not given one explicitly. `None` (the default) keeps the client's.
    fn retry_policy(&self, service: &str) -> Option<Arc<dyn crate::retry::RetryPolicy>> {
        let _ = service;
        None
    }
}

/// What a [`Resolver`] sees of the attempt it picks an instance for.
#[derive(Debug)]
#[non_exhaustive]
pub struct ChooseRequest<'a> {
    /// The call: service, method key, HTTP method, idempotency.
    pub call: CallInfo<'a>,
    /// The request headers after the interceptors ran (hints, canary flags, sticky cookies).
    pub headers: &'a HeaderMap,
    /// 1 for the first attempt, 2 for the first retry, and so on.
    pub attempt: u32,
    /// Instance ids already tried in this call, oldest first.
    pub tried: &'a [Arc<str>],
    /// Set when the retry policy asked to retry on the instance of the previous attempt.
    pub same_instance: Option<&'a str>,
}

impl<'a> ChooseRequest<'a> {
    /// A request for the first attempt of a call, idempotent by its method.
    pub fn new(
        service: &'a str,
        method_key: &'a str,
        method: &'a Method,
        headers: &'a HeaderMap,
    ) -> Self {
        ChooseRequest {
            call: CallInfo::new(service, method_key, method),
            headers,
            attempt: 1,
            tried: &[],
            same_instance: None,
        }
    }
}

/// The instance a [`Resolver`] picked for one attempt: where to send it, the instance's id, and
/// who hears how the attempt ended.
///
/// It is one shared [`InstanceHandle`] that knows its URL and id and is its own observer. A
/// balancer hands out its own ([`Chosen::from_handle`]), so a pick moves one reference count and
/// allocates nothing; other resolvers can build one from parts ([`Chosen::new`],
/// [`Chosen::with_observer`]). Being one pointer, a `Result<Chosen, Error>` is returned in
/// registers.
///
/// A `Chosen` stands for one attempt: it is not `Clone`, and [`Chosen::complete`] consumes it,
/// so an attempt is reported at most once. A balancer may count the attempt as in flight for
/// as long as its `Chosen` lives.
pub struct Chosen {
    handle: Arc<dyn InstanceHandle>,
}

/// A handle built from parts, with or without an observer.
struct Parts {
    base_url: Arc<str>,
    instance_id: Arc<str>,
    observer: Option<Arc<dyn CallObserver>>,
}

impl CallObserver for Parts {
    fn on_complete(&self, outcome: &AttemptOutcome<'_>, elapsed: Duration) {
        if let Some(observer) = &self.observer {
            observer.on_complete(outcome, elapsed);
        }
    }

    fn on_complete_at(&self, outcome: &AttemptOutcome<'_>, elapsed: Duration, ended: Instant) {
        if let Some(observer) = &self.observer {
            observer.on_complete_at(outcome, elapsed, ended);
        }
    }
}

impl InstanceHandle for Parts {
    fn base_url(&self) -> &Arc<str> {
        &self.base_url
    }

    fn instance_id(&self) -> &Arc<str> {
        &self.instance_id
    }

    fn is_observed(&self) -> bool {
        self.observer.is_some()
    }
}

impl Chosen {
    /// An instance with no observer.
    pub fn new(base_url: impl Into<Arc<str>>, instance_id: impl Into<Arc<str>>) -> Self {
        Chosen::from_handle(Arc::new(Parts {
            base_url: base_url.into(),
            instance_id: instance_id.into(),
            observer: None,
        }))
    }

    /// An instance given as one handle that is also the attempt's observer.
    pub fn from_handle(handle: Arc<dyn InstanceHandle>) -> Self {
        Chosen { handle }
    }

    /// Attaches the observer that hears how the attempt ended, replacing any earlier one
    /// (a handle's own observation included: the handle is released, and with it the attempt as
    /// its balancer counts it).
    pub fn with_observer(self, observer: Arc<dyn CallObserver>) -> Self {
        Chosen::from_handle(Arc::new(Parts {
            base_url: self.handle.base_url().clone(),
            instance_id: self.handle.instance_id().clone(),
            observer: Some(observer),
        }))
    }

    /// Scheme and authority, optionally followed by a base path: `http://10.0.0.7:8080`.
    pub fn base_url(&self) -> &Arc<str> {
        self.handle.base_url()
    }

    /// The instance's id, reported back in [`ChooseRequest::tried`] on a retry.
    pub fn instance_id(&self) -> &Arc<str> {
        self.handle.instance_id()
    }

    /// Whether anyone hears how the attempt ends.
    pub fn is_observed(&self) -> bool {
        self.handle.is_observed()
    }

    /// Tells the observer, if any, how the attempt ended, and ends the attempt. The pipeline
    /// calls it exactly once per attempt.
    pub fn complete(self, outcome: &AttemptOutcome<'_>, elapsed: Duration) {
        self.handle.on_complete(outcome, elapsed);
    }

    /// [`Chosen::complete`] with the instant the attempt ended, as the caller read it to
    /// measure `elapsed`: an observer that keeps time takes it from here rather than reading
    /// the clock a second time. The pipeline completes its attempts this way.
    pub fn complete_at(self, outcome: &AttemptOutcome<'_>, elapsed: Duration, ended: Instant) {
        self.handle.on_complete_at(outcome, elapsed, ended);
    }
}

impl std::fmt::Debug for Chosen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chosen")
            .field("base_url", &crate::redact::url(self.base_url()))
            .field("instance_id", self.instance_id())
            .finish_non_exhaustive()
    }
}

/// One instance as a resolver hands it out: its URL and id, and the observer of attempts sent
/// to it, behind a single shared pointer (see [`Chosen::from_handle`]). Each [`Chosen`] holds one
/// reference to it from the pick until the attempt is completed or dropped, so a balancer can
/// read its attempts in flight off the reference count.
pub trait InstanceHandle: CallObserver {
    /// Scheme and authority, optionally followed by a base path: `http://10.0.0.7:8080`.
    fn base_url(&self) -> &Arc<str>;

    /// The instance's id.
    fn instance_id(&self) -> &Arc<str>;

    /// Whether [`CallObserver::on_complete`] reports to anyone; `true` unless the handle only
    /// carries an address.
    fn is_observed(&self) -> bool {
        true
    }
}

/// Hears how an attempt sent to a chosen instance ended: balancers keep in-flight counts,
/// latency averages and failure counts with it.
///
/// The pipeline guarantees exactly one call of [`CallObserver::on_complete`] per [`Chosen`]
/// it used, with [`AttemptOutcome::Discarded`] when the call's future was dropped mid-attempt.
pub trait CallObserver: Send + Sync + 'static {
    /// Called once when the attempt ends.
    fn on_complete(&self, outcome: &AttemptOutcome<'_>, elapsed: Duration);

    /// Called once when the attempt ends, instead of [`CallObserver::on_complete`], by a caller
    /// that read the clock when it ended (`ended`, on tokio's clock): an observer that stamps
    /// what it learns overrides it to reuse that reading. Forwards to `on_complete` by default.
    fn on_complete_at(&self, outcome: &AttemptOutcome<'_>, elapsed: Duration, ended: Instant) {
        let _ = ended;
        self.on_complete(outcome, elapsed);
    }
}

/// How one attempt ended, as a [`CallObserver`] sees it.
#[derive(Debug)]
#[non_exhaustive]
pub enum AttemptOutcome<'a> {
    /// A response arrived; any status, including 4xx and 5xx.
    Response(StatusCode),
    /// The attempt failed without a response (connect error, timeout, body error).
    Failed(&'a Error),
    /// The call was cancelled or abandoned before the attempt ended.
    Discarded,
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    struct Instance {
        base_url: Arc<str>,
        id: Arc<str>,
        completed: AtomicU32,
    }

    impl CallObserver for Instance {
        fn on_complete(&self, _outcome: &AttemptOutcome<'_>, _elapsed: Duration) {
            self.completed.fetch_add(1, Ordering::Relaxed);
        }
    }

    impl InstanceHandle for Instance {
        fn base_url(&self) -> &Arc<str> {
            &self.base_url
        }

        fn instance_id(&self) -> &Arc<str> {
            &self.id
        }
    }

    fn instance() -> Arc<Instance> {
        Arc::new(Instance {
            base_url: "http://user:s3cret@10.0.0.7:8080".into(),
            id: "i7".into(),
            completed: AtomicU32::new(0),
        })
    }

    #[test]
    fn a_handle_is_the_url_the_id_and_the_observer() {
        let handle = instance();
        let chosen = Chosen::from_handle(handle.clone());
        assert_eq!(&**chosen.base_url(), "http://user:s3cret@10.0.0.7:8080");
        assert_eq!(&**chosen.instance_id(), "i7");
        assert!(chosen.is_observed());
        let debug = format!("{chosen:?}");
        assert!(!debug.contains("s3cret"), "{debug}");
        chosen.complete(&AttemptOutcome::Discarded, Duration::ZERO);
        assert_eq!(handle.completed.load(Ordering::Relaxed), 1);
        assert_eq!(
            Arc::strong_count(&handle),
            1,
            "completing releases the handle"
        );
    }

    #[test]
    fn another_observer_replaces_the_handles_own() {
        let handle = instance();
        let other = instance();
        let chosen = Chosen::from_handle(handle.clone()).with_observer(other.clone());
        assert_eq!(&**chosen.instance_id(), "i7");
        chosen.complete(&AttemptOutcome::Discarded, Duration::ZERO);
        assert_eq!(handle.completed.load(Ordering::Relaxed), 0);
        assert_eq!(other.completed.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn completing_with_the_end_instant_reaches_the_same_observers() {
        let (handle, other) = (instance(), instance());
        let outcome = AttemptOutcome::Discarded;
        Chosen::from_handle(handle.clone()).complete_at(&outcome, Duration::ZERO, Instant::now());
        Chosen::from_handle(handle.clone())
            .with_observer(other.clone())
            .complete_at(&outcome, Duration::ZERO, Instant::now());
        assert_eq!(handle.completed.load(Ordering::Relaxed), 1);
        assert_eq!(other.completed.load(Ordering::Relaxed), 1);
        assert_eq!(Arc::strong_count(&handle), 1);
    }

    #[test]
    fn a_result_of_a_choice_fits_two_registers() {
        assert_eq!(
            std::mem::size_of::<Result<Chosen, Error>>(),
            2 * std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn parts_without_an_observer_report_to_no_one() {
        let chosen = Chosen::new("http://10.0.0.7:8080", "i7");
        assert!(!chosen.is_observed());
        assert_eq!(&**chosen.base_url(), "http://10.0.0.7:8080");
        chosen.complete(&AttemptOutcome::Discarded, Duration::ZERO);
    }
}
