//! The call pipeline, one path from the generated method to its return value:
//!
//! 1. [`call`]: `Core::call`, the one entry: the breaker, bulkhead and adaptive limit; the
//!    span and metrics; the request interceptors; the layers or the exchange; the return kind
//!    ([`returns`]) made from the answer.
//! 2. [`around`]: the layers added with `Builder::layer`, over a service that runs the rest.
//! 3. [`retrying`]: under the layers, the checked request sent attempt after attempt within the
//!    total timeout; [`send`] makes one attempt, [`hedge`] the hedged first ones; [`exchange`]
//!    holds the settings they run on and the one rule for which statuses answer a call.
//!
//! The other modules are their parts: [`args`] (arguments into a request), [`receive`] (a body
//! read whole or left streaming), [`body`] and [`upload`] (bounded reads and writes),
//! [`observe`], [`span`] and [`metrics`] (telemetry), [`live`] (a live client's current core).
//!
//! This file only names the modules and what the rest of the crate takes from them.

mod args;
mod around;
mod body;
mod call;
mod exchange;
mod hedge;
#[cfg(feature = "config")]
mod live;
mod metrics;
mod observe;
mod receive;
mod retrying;
mod returns;
mod send;
mod span;
mod upload;

pub use args::{HeaderMapArg, HeaderPart, RequestArgs};
pub use around::CallRequest;
pub use call::Core;
pub use receive::Receive;
pub use returns::{
    BodyKind, Decoding, Entity, Json, Optional, Raw, ReturnKind, Stream, Text, Unit, Whole,
};

pub(crate) use around::{build as build_layers, wrap, Wrap};
pub(crate) use call::CoreInner;
pub(crate) use exchange::{Compression, Exchange, Limits, Target};
#[cfg(feature = "config")]
pub(crate) use live::Live;
