//! The settings a service can have of its own, each written once: its setter on
//! [`ServiceConfig`] (for one service) and the same setter on [`Builder`] (the default of every
//! service), with one doc comment and one default for both.

use std::sync::Arc;

use super::{clamp_share, Builder, ServiceConfig};
use crate::config::{Ejection, PeakEwma, Policy, SlowStart};
use crate::filter::{Canary, Hints, StickySession, VersionRouting, ZonePreference};
use crate::{InstanceSupplier, RetryConfig};

/// Defines each setting once: `fn name(value: Type) => field = expression;` makes
/// `ServiceConfig::name`, which sets `field` to `Some(expression)`, and `Builder::name`, which
/// does the same on the settings every service starts from.
macro_rules! per_service {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($value:ident: $ty:ty) => $field:ident = $set:expr;
    )*) => {
        impl ServiceConfig {
            $(
                $(#[$doc])*
                pub fn $name(mut self, $value: $ty) -> Self {
                    self.$field = Some($set);
                    self
                }
            )*
        }

        impl Builder {
            $(
                $(#[$doc])*
                pub fn $name(mut self, $value: $ty) -> Self {
                    self.defaults = self.defaults.$name($value);
                    self
                }
            )*
        }
    };
}

per_service! {
    /// Where instances come from (no default: without a supplier, every pick fails with "no
    /// instance").
    fn supplier(supplier: impl InstanceSupplier) => supplier = Arc::new(supplier);

    /// Same as `supplier`, for a supplier shared with other code (e.g. a discovery client also
    /// used elsewhere).
    fn shared_supplier(supplier: Arc<dyn InstanceSupplier>) => supplier = supplier;

    /// The policy (default [`Policy::RoundRobin`]).
    fn policy(policy: Policy) => policy = policy;

    /// Retry settings (default [`RetryConfig::new`]).
    fn retry(retry: RetryConfig) => retry = retry;

    /// Zone preference with failover (default off; `None` turns it off).
    fn zone_preference(zone: impl Into<Option<ZonePreference>>) => zone = zone.into();

    /// Hint routing by `X-SC-LB-Hint` (default off; `None` turns it off).
    fn hints(hints: impl Into<Option<Hints>>) => hints = hints.into();

    /// Canary routing (default off; `None` turns it off).
    fn canary(canary: impl Into<Option<Canary>>) => canary = canary.into();

    /// Version routing (default off; `None` turns it off).
    fn version_routing(routing: impl Into<Option<VersionRouting>>) => version = routing.into();

    /// Request-based sticky sessions by cookie `sc-lb-instance-id` (default off; `None` turns
    /// them off).
    fn sticky_session(sticky: impl Into<Option<StickySession>>) => sticky = sticky.into();

    /// Prefer the instance picked last while it is listed and not ejected (Spring's
    /// same-instance preference; default off).
    fn same_instance_preference(yes: bool) => same_instance = yes;

    /// Passive ejection (default [`Ejection::new`]).
    fn ejection(ejection: Ejection) => ejection = ejection;

    /// Slow start (default [`SlowStart::new`]: 30 s).
    fn slow_start(slow_start: SlowStart) => slow_start = slow_start;

    /// Peak-EWMA tuning (default [`PeakEwma::new`]).
    fn peak_ewma(peak_ewma: PeakEwma) => peak_ewma = peak_ewma;

    /// When more than this share of a service's instances (default 0.5) is ejected, balance
    /// across all of them, ejected or not (Envoy's panic threshold: one of two instances
    /// ejected is not a panic). Clamped to 0.0..=1.0.
    fn panic_threshold(share: f64) => panic_threshold = clamp_share(share, 0.5);
}
