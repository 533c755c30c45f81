//! The candidates of a pick as the routing filters narrow them, without allocating: the first
//! filter that matches something replaces the base view, later ones become predicates.

use crate::snapshot::{is_canary, Snapshot};
use crate::view::View;
use crate::ServiceInstance;

/// A constraint a routing filter puts on the pick.
#[derive(Clone, Copy)]
pub(crate) enum Pred<'a> {
    /// In the zone (`true`) or outside it (`false`).
    InZone(&'a str, bool),
    /// Metadata `key` equals the value.
    Meta(&'static str, &'a str),
    /// A canary (`true`) or a stable instance (`false`).
    Canary(bool),
}

impl Pred<'_> {
    /// Whether `instance` meets the constraint.
    pub(crate) fn holds(&self, instance: &ServiceInstance) -> bool {
        match *self {
            Pred::InZone(zone, inside) => {
                instance
                    .zone()
                    .is_some_and(|z| z.eq_ignore_ascii_case(zone))
                    == inside
            }
            Pred::Meta(key, value) => instance.metadata().get(key).is_some_and(|v| v == value),
            Pred::Canary(yes) => is_canary(instance) == yes,
        }
    }
}

/// The candidates as the routing filters narrow them: the first filter that matches something
/// becomes the base view; later ones become predicates when the candidates contain a match.
pub(crate) struct Narrowing<'v> {
    /// The view the policy draws from.
    pub(crate) base: &'v View,
    narrowed: bool,
    preds: [Option<Pred<'v>>; 4],
    slot: usize,
}

impl<'v> Narrowing<'v> {
    /// No filter applied yet: every instance of `all` is a candidate.
    pub(crate) fn new(all: &'v View) -> Self {
        Narrowing {
            base: all,
            narrowed: false,
            preds: [None; 4],
            slot: 0,
        }
    }

    /// The predicates a candidate of the base view must also meet.
    pub(crate) fn preds(&self) -> &[Option<Pred<'v>>] {
        &self.preds[..self.slot]
    }

    /// Applies one filter; returns whether it was applied (a filter matching nothing is not).
    pub(crate) fn apply(&mut self, snap: &Snapshot, view: &'v View, pred: Pred<'v>) -> bool {
        if view.is_empty() {
            return false;
        }
        if !self.narrowed {
            self.base = view;
            self.narrowed = true;
            return true;
        }
        let earlier = self.preds();
        let any = self.base.members.iter().any(|&m| {
            let instance = snap.instance(m as usize);
            pred.holds(instance) && earlier.iter().flatten().all(|p| p.holds(instance))
        });
        if any && self.slot < self.preds.len() {
            self.preds[self.slot] = Some(pred);
            self.slot += 1;
            return true;
        }
        false
    }
}
